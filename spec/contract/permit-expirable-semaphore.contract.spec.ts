import { semaphoreKind } from './kinds';
import { semaphoreContract } from './semaphore-contract';

semaphoreContract(semaphoreKind('permit-expirable-semaphore'));
