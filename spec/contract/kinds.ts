import { fairWaiterChannel, fencingTokenKey, lockChannel, readWriteLockChannel } from '../../lib/keys';
import type { LockKindUnderTest } from './lock-contract';
import type { SemaphoreKindUnderTest } from './semaphore-contract';

/**
 * Every lock kind the contract runs on every topology (spec/topology/*.contract.spec.ts). A new kind
 * joins the Cluster and Sentinel runs, and their failover and slot-move tests
 * (spec/topology/failover-kinds.spec.ts), by adding one line here.
 */
export const LOCK_KINDS: readonly LockKindUnderTest[] = [
  { kind: 'RLock', factory: 'getLock', channel: lockChannel, reentrant: true },
  { kind: 'FairLock', factory: 'getFairLock', channel: lockChannel, waiterChannel: fairWaiterChannel, reentrant: true },
  {
    kind: 'NonReentrantFairLock',
    factory: 'getNonReentrantFairLock',
    channel: lockChannel,
    waiterChannel: fairWaiterChannel,
    reentrant: false,
  },
  { kind: 'RWriteLock', factory: 'getReadWriteLock.writeLock', channel: readWriteLockChannel, reentrant: true },
  {
    kind: 'RReadLock',
    factory: 'getReadWriteLock.readLock',
    channel: readWriteLockChannel,
    reentrant: true,
    shared: { excludedBy: 'getReadWriteLock.writeLock' },
  },
  // A spin lock never subscribes: the contract's wake test becomes its no-subscription variant.
  { kind: 'SpinLock', factory: 'getSpinLock', channel: () => undefined, reentrant: true },
  // The token counter outlives every hold by design (tokens must never go back).
  { kind: 'FencedLock', factory: 'getFencedLock', channel: lockChannel, reentrant: true, keeps: (name) => [fencingTokenKey(name)] },
  { kind: 'NonReentrantLock', factory: 'getNonReentrantLock', channel: lockChannel, reentrant: false },
];

/** Every semaphore kind the semaphore contract runs on every topology. */
export const SEMAPHORE_KINDS: readonly SemaphoreKindUnderTest[] = [
  { kind: 'RSemaphore', factory: 'getSemaphore' },
  { kind: 'RPermitExpirableSemaphore', factory: 'getPermitExpirableSemaphore' },
];

/** The entry of `kind` in {@link LOCK_KINDS}. */
export function lockKind(kind: string): LockKindUnderTest {
  const found = LOCK_KINDS.find((entry) => entry.kind === kind);
  if (!found) throw new Error(`No lock kind ${kind}`);
  return found;
}
