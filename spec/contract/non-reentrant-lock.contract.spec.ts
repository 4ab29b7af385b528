import { lockChannel } from '../../lib/keys';
import { lockContract } from './lock-contract';

lockContract({ kind: 'NonReentrantLock', factory: 'getNonReentrantLock', channel: lockChannel, reentrant: false });
