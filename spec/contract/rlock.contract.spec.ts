import { lockChannel } from '../../lib/keys';
import { lockContract } from './lock-contract';

lockContract({ kind: 'RLock', factory: 'getLock', channel: lockChannel, reentrant: true });
