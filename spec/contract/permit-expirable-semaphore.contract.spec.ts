import { semaphoreContract } from './semaphore-contract';

semaphoreContract({ kind: 'RPermitExpirableSemaphore', factory: 'getPermitExpirableSemaphore' });
