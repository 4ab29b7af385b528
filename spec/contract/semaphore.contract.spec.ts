import { SEMAPHORE_KINDS } from './kinds';
import { semaphoreContract } from './semaphore-contract';

semaphoreContract(SEMAPHORE_KINDS[0]!);
