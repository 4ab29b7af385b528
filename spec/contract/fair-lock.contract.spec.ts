import { fairWaiterChannel, lockChannel } from '../../lib/keys';
import { lockContract } from './lock-contract';

lockContract({ kind: 'FairLock', factory: 'getFairLock', channel: lockChannel, waiterChannel: fairWaiterChannel, reentrant: true });
