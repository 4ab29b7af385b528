import { InvalidArgumentError } from '../errors';
import { lockChannel } from '../keys';
import type { ClientContext, HoldKind } from '../kernel/context';
import { BaseLock } from '../kernel/lock';
import type { LockKind, LockTarget } from '../kernel/lock-kind';
import { wakeAll } from '../kernel/pubsub/wake';
import { newRequestId } from './scripts/lock';
import {
  acquireValues,
  forceUnlockValues,
  renewValues,
  trimValues,
  unlockValues,
  valueHolders,
  type GroupValues,
  type ValueHolder,
} from './scripts/faster-multi-lock';
import { hash128toBase64 } from './values/highway-hash';
import { kryoBytes, type MultiLockValue } from './values/kryo';

/** Separates the fields in a record's `part` (Base64 never contains it). */
const FIELD_SEPARATOR = ',';

/** Group multi-locks' holds: renewed value by value, each lease carrying its fields as its part. */
export const GROUP_VALUES: HoldKind = {
  renew: (scripts, batch, leaseTime) =>
    renewValues(
      scripts,
      batch.map(({ name, owner, part }) => ({ group: name, owner, fields: (part ?? '').split(FIELD_SEPARATOR) })),
      leaseTime,
    ),
};

/**
 * The field Redisson stores for `value` in a group's hash: the HighwayHash-128 of the value's bytes
 * under Redisson's default codec (Kryo5Codec), in Base64 without padding.
 * @throws {InvalidArgumentError} for a value the codec mapping does not cover (see {@link MultiLockValue}).
 */
export function valueField(value: MultiLockValue): string {
  return hash128toBase64(kryoBytes(value));
}

/**
 * @internal Checks `values` and returns their fields, sorted.
 * @throws {InvalidArgumentError} for no values, a value twice, or a value without a known encoding.
 */
export function valueFields(values: readonly MultiLockValue[]): string[] {
  const given: unknown = values;
  if (!Array.isArray(given)) throw new InvalidArgumentError('getMultiLock(group, values): values must be an array');
  if (values.length === 0) throw new InvalidArgumentError('getMultiLock(group, values): values must not be empty');
  const fields = new Map<string, MultiLockValue>();
  for (const value of values) {
    const field = valueField(value);
    if (fields.has(field))
      throw new InvalidArgumentError(`getMultiLock(group, values): the value ${shown(value)} is given twice`);
    fields.set(field, value);
  }
  return [...fields.keys()].sort();
}

const shown = (value: MultiLockValue): string =>
  typeof value === 'string' ? JSON.stringify(value) : typeof value === 'bigint' ? `${value}n` : String(value);

/** Holders whose expiry has not passed (an expired holder no longer excludes anyone). */
async function liveHolders({ ctx, name }: LockTarget, fields: readonly string[]): Promise<Array<ValueHolder | null>> {
  const holders = await valueHolders(ctx.scripts, { group: name, fields });
  const now = Date.now();
  return holders.map((holder) => (holder && holder.expiresAt >= now ? holder : null));
}

/** The record of a group multi-lock over `fields`: every verb acts on all of them at once. */
function groupValuesKind(fields: readonly string[]): LockKind {
  const of = ({ name }: LockTarget): GroupValues => ({ group: name, fields });
  const heldBy = (holders: ReadonlyArray<ValueHolder | null>, owner: string) =>
    holders.every((holder) => holder?.owner === owner);
  return {
    kind: 'faster-multi-lock',
    holds: GROUP_VALUES,
    part: fields.join(FIELD_SEPARATOR),
    attempt: (lock, { owner, leaseTime, believedHolds }) =>
      acquireValues(lock.ctx.scripts, of(lock), owner, leaseTime, believedHolds),
    trim: (lock, owner, holdsBefore) => trimValues(lock.ctx.scripts, of(lock), owner, holdsBefore),
    release: (lock, owner, leaseTime) => unlockValues(lock.ctx.scripts, of(lock), owner, leaseTime, newRequestId()),
    forceRelease: async (lock) => ({
      existed: (await forceUnlockValues(lock.ctx.scripts, of(lock))) > 0,
      lost: [GROUP_VALUES],
    }),
    isLocked: async (lock) => (await liveHolders(lock, fields)).some((holder) => holder !== null),
    isHeldBy: async (lock, owner) => heldBy(await liveHolders(lock, fields), owner),
    holdCount: async (lock, owner) => {
      const holders = await liveHolders(lock, fields);
      return heldBy(holders, owner) ? Math.min(...holders.map((holder) => holder!.holds)) : 0;
    },
    remainTimeToLive: async (lock) => {
      const expiries = (await liveHolders(lock, fields)).flatMap((holder) => (holder ? [holder.expiresAt] : []));
      return expiries.length === 0 ? -2 : Math.max(0, Math.max(...expiries) - Date.now());
    },
    channel: ({ name }) => lockChannel(name),
    // Waiters of one group want different values: a release wakes them all, each tries its own set.
    wake: wakeAll,
    queuesBehindLocalWaiters: false,
  };
}

/**
 * All-or-nothing over many values of one group, in one hash and one round trip (Redisson's
 * `RedissonFasterMultiLock`, Java's `redisson.getMultiLock(group, values)`). Per value, the group's
 * hash holds a field naming its owner (`<clientId>:<threadId>`) and, per owner, its expiry time and
 * hold count; one script takes or releases every value, or none. Stored exactly as Redisson stores
 * it, so a Java and a Node lock on overlapping values of a group exclude each other value by value
 * and wake each other on `redisson_lock__channel:{group}`. Get one from
 * `RedissonClient.getMultiLock(group, values)`.
 *
 * Every value's field is Redisson's hash of the value's bytes under the default codec: see
 * {@link MultiLockValue} for which JavaScript value stands for which Java value.
 *
 * @example
 * ```ts
 * const seats = redisson.getMultiLock('show:42', ['A1', 'A2', 'A3']);
 * await seats.using(() => book(42, ['A1', 'A2', 'A3']), { waitTime: 5_000 });
 * ```
 * @category Locks
 */
export class RFasterMultiLock extends BaseLock {
  /** The values, as given. */
  readonly values: readonly MultiLockValue[];

  /** @internal Use `RedissonClient.getMultiLock(group, values)`. */
  constructor(ctx: ClientContext, group: string, values: readonly MultiLockValue[], fields: readonly string[]) {
    super(ctx, group, groupValuesKind(fields));
    this.values = Object.freeze([...values]);
  }
}
