import { KIND_LIST, type KindInfo, type KindName } from '../../lib/kinds/registry';
import type { LockKindUnderTest } from './lock-contract';
import type { SemaphoreKindUnderTest } from './semaphore-contract';

/*
 * The contract suites' subjects, read from the registry of kinds (lib/kinds/registry.ts): a kind
 * whose descriptor names a contract joins it here, and so the Cluster and Sentinel runs
 * (spec/topology/*.contract.spec.ts) and their failover and slot-move tests
 * (spec/topology/failover-kinds.spec.ts), with no line of its own in this file.
 */

/** The path of factory calls on the client that reaches `kind`, e.g. `getReadWriteLock.readLock`. */
function factoryPath(kind: KindInfo): string {
  return kind.view === undefined ? kind.factory : `${kind.factory}.${kind.view}`;
}

/** The class name of `kind`, for test titles. */
function title(kind: KindInfo): string {
  return kind.class.name;
}

function byName(name: KindName): KindInfo {
  const found = KIND_LIST.find((kind) => kind.name === name);
  if (!found) throw new Error(`No kind ${name}`);
  return found;
}

function lockSubject(kind: KindInfo): LockKindUnderTest {
  if (kind.contract?.suite !== 'lock') throw new Error(`${kind.name} does not run the lock contract`);
  const { reentrant, excludedBy } = kind.contract;
  const subject: LockKindUnderTest = {
    kind: title(kind),
    factory: factoryPath(kind),
    channel: kind.channel ?? (() => undefined),
    reentrant,
  };
  if (kind.contract.args) subject.args = kind.contract.args;
  if (kind.waiterChannel) subject.waiterChannel = kind.waiterChannel;
  if (kind.keeps) subject.keeps = kind.keeps;
  if (excludedBy) subject.shared = { excludedBy: factoryPath(byName(excludedBy)) };
  return subject;
}

function semaphoreSubject(kind: KindInfo): SemaphoreKindUnderTest {
  if (kind.contract?.suite !== 'semaphore') throw new Error(`${kind.name} does not run the semaphore contract`);
  return { kind: title(kind), factory: kind.factory };
}

/** Every lock kind the contract runs on every topology. */
export const LOCK_KINDS: readonly LockKindUnderTest[] = KIND_LIST.filter((kind) => kind.contract?.suite === 'lock').map(
  lockSubject,
);

/** Every semaphore kind the semaphore contract runs on every topology. */
export const SEMAPHORE_KINDS: readonly SemaphoreKindUnderTest[] = KIND_LIST.filter(
  (kind) => kind.contract?.suite === 'semaphore',
).map(semaphoreSubject);

/** The lock contract's subject for `name`. */
export function lockKind(name: KindName): LockKindUnderTest {
  return lockSubject(byName(name));
}

/** The semaphore contract's subject for `name`. */
export function semaphoreKind(name: KindName): SemaphoreKindUnderTest {
  return semaphoreSubject(byName(name));
}
