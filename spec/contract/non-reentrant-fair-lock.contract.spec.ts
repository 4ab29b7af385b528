import { fairWaiterChannel, lockChannel } from '../../lib/keys';
import { lockContract } from './lock-contract';

lockContract({
  kind: 'NonReentrantFairLock',
  factory: 'getNonReentrantFairLock',
  channel: lockChannel,
  waiterChannel: fairWaiterChannel,
  reentrant: false,
});
