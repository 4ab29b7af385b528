import { fencingTokenKey, lockChannel } from '../../lib/keys';
import { lockContract } from './lock-contract';

// The token counter outlives every hold by design (tokens must never go back).
lockContract({
  kind: 'FencedLock',
  factory: 'getFencedLock',
  channel: lockChannel,
  reentrant: true,
  keeps: (name) => [fencingTokenKey(name)],
});
