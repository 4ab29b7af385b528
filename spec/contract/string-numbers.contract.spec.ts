import { lockChannel } from '../../lib/keys';
import { lockContract } from './lock-contract';

// ioredis' `stringNumbers` turns every integer reply into a string: the library must read both.
lockContract({
  kind: 'RLock on a stringNumbers connection',
  factory: 'getLock',
  channel: lockChannel,
  reentrant: true,
  connection: { stringNumbers: true },
});
