import { lockChannel } from '../../lib/keys';
import type { LockKindUnderTest } from './lock-contract';

/**
 * Every lock kind the contract runs on every topology (spec/topology/*.contract.spec.ts). A new kind
 * joins the Cluster and Sentinel runs by adding one line here.
 */
export const LOCK_KINDS: readonly LockKindUnderTest[] = [
  { kind: 'RLock', factory: 'getLock', channel: lockChannel, reentrant: true },
];
