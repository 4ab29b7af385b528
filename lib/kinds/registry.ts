import type { ClientContext } from '../kernel/context';
import {
  fairLockQueue,
  fairLockTimeouts,
  fairWaiterChannel,
  fencingTokenKey,
  latchChannel,
  lockChannel,
  permitTimeoutKey,
  readWriteLockChannel,
  semaphoreChannel,
} from '../keys';
import { checkName } from '../options';
import type { BaseLock } from '../kernel/lock';
import { checkMembers } from './composite';
import { RCountDownLatch } from './count-down-latch';
import { RFairLock } from './fair-lock';
import { RFasterMultiLock, valueFields } from './faster-multi-lock';
import { RFencedLock } from './fenced-lock';
import { RMultiLock } from './multi-lock';
import { RNonReentrantFairLock } from './non-reentrant-fair-lock';
import { RNonReentrantLock } from './non-reentrant-lock';
import { RPermitExpirableSemaphore } from './permit-expirable-semaphore';
import { RReadLock, RReadWriteLock, RWriteLock } from './read-write-lock';
import { RRedLock } from './red-lock';
import { RLock } from './rlock';
import { RSemaphore } from './semaphore';
import { RSpinLock, toBackOff, type BackOffOptions } from './spin-lock';
import type { MultiLockValue } from './values/kryo';

/*
 * The registry of kinds: one descriptor per kind, read by RedissonClient's factories, the CLI and the
 * contract suites. Data and small functions only; a kind's behaviour stays in its own file.
 */

/**
 * How Redisson stores a kind under its name, as the CLI tells them apart (several kinds share one:
 * a spin lock is stored as an RLock). These ids are the `kind` of the CLI's reports.
 */
export type StoredAs =
  | 'lock'
  | 'fairLock'
  | 'fencedLock'
  | 'readWriteLock'
  | 'semaphore'
  | 'permitExpirableSemaphore'
  | 'countDownLatch'
  | 'fasterMultiLock';

/** A key derived from an object's name, and what it is for (the CLI names it by `role`). */
export interface DerivedKey {
  /** What the key is, e.g. `fair-lock queue`. */
  readonly role: string;
  /** The key of the object called `name` (a function of lib/keys.ts). */
  readonly of: (name: string) => string;
}

/** One way of storing: what the CLI shows and which keys and channel it reads. */
export interface Storage {
  /** The Redisson kinds stored this way, for people. */
  readonly label: string;
  /** Keys besides the name itself, by the role names of the CLI's reports. */
  readonly keys: Readonly<Record<string, DerivedKey>>;
  /** The channel its waiters listen on (a fair lock's waiters each add their own token to it). */
  readonly channel: (name: string) => string;
}

/** Every way of storing, by its id. */
export const STORAGE = {
  lock: {
    label: 'lock (RLock; a spin or non-reentrant lock is stored the same way)',
    keys: {},
    channel: lockChannel,
  },
  fairLock: {
    label: 'fair lock (RFairLock)',
    keys: {
      queue: { role: 'fair-lock queue', of: fairLockQueue },
      deadlines: { role: 'fair-lock deadlines', of: fairLockTimeouts },
    },
    channel: lockChannel,
  },
  fencedLock: {
    label: 'fenced lock (RFencedLock)',
    keys: { token: { role: 'fencing token', of: fencingTokenKey } },
    channel: lockChannel,
  },
  readWriteLock: { label: 'read/write lock (RReadWriteLock)', keys: {}, channel: readWriteLockChannel },
  semaphore: { label: 'semaphore (RSemaphore)', keys: {}, channel: semaphoreChannel },
  permitExpirableSemaphore: {
    label: 'permit-expirable semaphore (RPermitExpirableSemaphore)',
    keys: { permits: { role: 'expirable permits', of: permitTimeoutKey } },
    channel: semaphoreChannel,
  },
  countDownLatch: { label: 'count-down latch (RCountDownLatch)', keys: {}, channel: latchChannel },
  fasterMultiLock: { label: 'group multi-lock (RFasterMultiLock)', keys: {}, channel: lockChannel },
} as const satisfies Readonly<Record<StoredAs, Storage>>;

/** Which contract suite (spec/contract/) a kind runs, with the traits that suite reads. */
export type ContractMembership =
  | {
      readonly suite: 'lock';
      /** Whether the owner re-enters (false: a second acquire by the holder fails). */
      readonly reentrant: boolean;
      /** A shared lock (a read lock): the kind whose holder keeps it out. */
      readonly excludedBy?: KindName;
      /** The factory's arguments after the name, for a kind made from more than a name. */
      readonly args?: readonly unknown[];
    }
  | { readonly suite: 'semaphore' }
  | { readonly suite: 'latch' };

/** A kind's name, as metrics and the registry know it. */
export type KindName =
  | 'lock'
  | 'fair-lock'
  | 'read-lock'
  | 'write-lock'
  | 'spin-lock'
  | 'fenced-lock'
  | 'non-reentrant-lock'
  | 'non-reentrant-fair-lock'
  | 'multi-lock'
  | 'faster-multi-lock'
  | 'red-lock'
  | 'semaphore'
  | 'permit-expirable-semaphore'
  | 'count-down-latch';

/** What every kind says about itself, whatever its factory's arguments. */
export interface KindInfo {
  /** The kind's name. */
  readonly name: KindName;
  /** Its public class. */
  readonly class: abstract new (...args: never) => unknown;
  /** The RedissonClient method that makes it (or makes the object `view` reaches it from). */
  readonly factory: string;
  /** The method of the factory's product that returns this kind (`readLock` of a read/write lock). */
  readonly view?: string;
  /** The channel its waiters subscribe to; absent for a kind whose waiters never subscribe. */
  readonly channel?: (name: string) => string;
  /** A waiter's own channel, for a kind whose waiters each listen on one (the fair lock). */
  readonly waiterChannel?: (name: string, owner: string) => string;
  /** Keys it keeps on purpose after every hold is released (the fencing token counter). */
  readonly keeps?: (name: string) => string[];
  /** How the CLI finds and reads it; absent for a kind with nothing of its own in Redis. */
  readonly stored?: StoredAs;
  /** The contract suite it runs. */
  readonly contract?: ContractMembership;
}

/** Names of `Made`'s methods that take nothing and return a `Self`. */
type ViewOf<Made, Self> = { [K in keyof Made]: Made[K] extends () => Self ? K : never }[keyof Made] & string;

/** A kind's descriptor: {@link KindInfo} with the factory's arguments and product typed. */
export interface KindDescriptor<Args extends readonly unknown[], Made, Self> extends KindInfo {
  readonly class: abstract new (...args: never) => Self;
  readonly view?: ViewOf<Made, Self>;
  /**
   * What the factory returns for `args`: checks them (`InvalidArgumentError` first), then that the
   * client is open (`ClientClosedError`), then makes the object. Never calls Redis.
   */
  make(ctx: ClientContext, ...args: Args): Made;
}

/** Types a descriptor (the factory's arguments and product inferred from `make`). */
function kind<const Name extends KindName, Args extends readonly unknown[], Made, Self = Made>(
  descriptor: KindDescriptor<Args, Made, Self> & { readonly name: Name },
): KindDescriptor<Args, Made, Self> & { readonly name: Name } {
  return descriptor;
}

/** Throws the client's `ClientClosedError` once it was shut down. */
function assertOpen(ctx: ClientContext): void {
  ctx.lifetime.throwIfAborted();
}

/** `make` of a kind made from its name alone. */
function byName<Made>(
  Kind: new (ctx: ClientContext, name: string) => Made,
): (ctx: ClientContext, name: string) => Made {
  return (ctx, name) => {
    checkName(name);
    assertOpen(ctx);
    return new Kind(ctx, name);
  };
}

/** `make` of a composite over locks given as arguments or as one array. */
function overLocks<Made>(
  Kind: new (ctx: ClientContext, locks: readonly BaseLock[]) => Made,
  what: string,
): (ctx: ClientContext, ...locks: BaseLock[] | [BaseLock[]]) => Made {
  return (ctx, ...locks) => {
    const members = checkMembers(locks, what);
    assertOpen(ctx);
    return new Kind(ctx, members);
  };
}

/** Both views of a read/write lock come from the one factory. */
const readWriteLock = byName(RReadWriteLock);

/** Every kind, by name. */
export const KINDS = {
  lock: kind({
    name: 'lock',
    class: RLock,
    factory: 'getLock',
    make: byName(RLock),
    channel: lockChannel,
    stored: 'lock',
    contract: { suite: 'lock', reentrant: true },
  }),
  'fair-lock': kind({
    name: 'fair-lock',
    class: RFairLock,
    factory: 'getFairLock',
    make: byName(RFairLock),
    channel: lockChannel,
    waiterChannel: fairWaiterChannel,
    stored: 'fairLock',
    contract: { suite: 'lock', reentrant: true },
  }),
  'non-reentrant-fair-lock': kind({
    name: 'non-reentrant-fair-lock',
    class: RNonReentrantFairLock,
    factory: 'getNonReentrantFairLock',
    make: byName(RNonReentrantFairLock),
    channel: lockChannel,
    waiterChannel: fairWaiterChannel,
    stored: 'fairLock',
    contract: { suite: 'lock', reentrant: false },
  }),
  'write-lock': kind({
    name: 'write-lock',
    class: RWriteLock,
    factory: 'getReadWriteLock',
    view: 'writeLock',
    make: readWriteLock,
    channel: readWriteLockChannel,
    stored: 'readWriteLock',
    contract: { suite: 'lock', reentrant: true },
  }),
  'read-lock': kind({
    name: 'read-lock',
    class: RReadLock,
    factory: 'getReadWriteLock',
    view: 'readLock',
    make: readWriteLock,
    channel: readWriteLockChannel,
    stored: 'readWriteLock',
    contract: { suite: 'lock', reentrant: true, excludedBy: 'write-lock' },
  }),
  // A spin lock's waiters poll: no channel.
  'spin-lock': kind({
    name: 'spin-lock',
    class: RSpinLock,
    factory: 'getSpinLock',
    make: (ctx: ClientContext, name: string, backOff?: BackOffOptions): RSpinLock => {
      checkName(name);
      const pauses = toBackOff(backOff);
      assertOpen(ctx);
      return new RSpinLock(ctx, name, pauses);
    },
    stored: 'lock',
    contract: { suite: 'lock', reentrant: true },
  }),
  'fenced-lock': kind({
    name: 'fenced-lock',
    class: RFencedLock,
    factory: 'getFencedLock',
    make: byName(RFencedLock),
    channel: lockChannel,
    // Tokens must never go back: the counter outlives every hold.
    keeps: (name) => [fencingTokenKey(name)],
    stored: 'fencedLock',
    contract: { suite: 'lock', reentrant: true },
  }),
  'non-reentrant-lock': kind({
    name: 'non-reentrant-lock',
    class: RNonReentrantLock,
    factory: 'getNonReentrantLock',
    make: byName(RNonReentrantLock),
    channel: lockChannel,
    stored: 'lock',
    contract: { suite: 'lock', reentrant: false },
  }),
  // Composites store nothing of their own: their members are what Redis and the CLI see.
  'multi-lock': kind({
    name: 'multi-lock',
    class: RMultiLock,
    factory: 'getMultiLock',
    make: overLocks(RMultiLock, 'getMultiLock()'),
  }),
  'faster-multi-lock': kind({
    name: 'faster-multi-lock',
    class: RFasterMultiLock,
    factory: 'getMultiLock',
    make: (ctx: ClientContext, group: string, values: readonly MultiLockValue[]): RFasterMultiLock => {
      checkName(group);
      const fields = valueFields(values);
      assertOpen(ctx);
      return new RFasterMultiLock(ctx, group, values, fields);
    },
    channel: lockChannel,
    stored: 'fasterMultiLock',
    contract: { suite: 'lock', reentrant: true, args: [['a', 'b', 7]] },
  }),
  'red-lock': kind({
    name: 'red-lock',
    class: RRedLock,
    factory: 'getRedLock',
    make: overLocks(RRedLock, 'getRedLock()'),
  }),
  semaphore: kind({
    name: 'semaphore',
    class: RSemaphore,
    factory: 'getSemaphore',
    make: byName(RSemaphore),
    channel: semaphoreChannel,
    stored: 'semaphore',
    contract: { suite: 'semaphore' },
  }),
  'permit-expirable-semaphore': kind({
    name: 'permit-expirable-semaphore',
    class: RPermitExpirableSemaphore,
    factory: 'getPermitExpirableSemaphore',
    make: byName(RPermitExpirableSemaphore),
    channel: semaphoreChannel,
    stored: 'permitExpirableSemaphore',
    contract: { suite: 'semaphore' },
  }),
  'count-down-latch': kind({
    name: 'count-down-latch',
    class: RCountDownLatch,
    factory: 'getCountDownLatch',
    make: byName(RCountDownLatch),
    channel: latchChannel,
    stored: 'countDownLatch',
    contract: { suite: 'latch' },
  }),
} as const satisfies { readonly [Name in KindName]: KindInfo & { readonly name: Name } };

/** Every kind, in the registry's order. */
export const KIND_LIST: readonly KindInfo[] = Object.values(KINDS);
