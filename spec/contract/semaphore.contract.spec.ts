import { semaphoreContract } from './semaphore-contract';

semaphoreContract({ kind: 'RSemaphore', factory: 'getSemaphore' });
