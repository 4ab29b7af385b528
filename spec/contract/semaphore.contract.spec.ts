import { semaphoreKind } from './kinds';
import { semaphoreContract } from './semaphore-contract';

semaphoreContract(semaphoreKind('semaphore'));
