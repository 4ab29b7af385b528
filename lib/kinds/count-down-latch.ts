import { latchChannel } from '../keys';
import { BoundedReply, fallbackBackOff } from '../kernel/acquisition';
import { ClientLocal, type ClientContext } from '../kernel/context';
import { SharedWait } from '../kernel/shared-wait';
import { reportSingleAttempt } from '../kernel/hold-events';
import { wakeAll } from '../kernel/pubsub/wake';
import { countDown, deleteLatch, latchCount, trySetCount } from './scripts/count-down-latch';
import { checkPermits, resolveSyncOptions, type LatchAwaitOptions } from './sync-options';
import { rejectingThrows } from '../kernel/rejecting';

/**
 * Longest an `await` parks before it re-checks the count by itself, in ms. The count reaching zero
 * wakes waiters by message; this bound only matters when that message was lost.
 */
export const LATCH_RECHECK_MS = 5_000;

/** The kind's name in events. */
const KIND = 'count-down-latch';

/** A client's count re-checks that calls may still join, by latch name (see {@link sharedCheck}). */
const JOINABLE_CHECKS = new ClientLocal(() => new Map<string, Promise<number | null>>());

/** The wait each latch's `await` callers of one client share, by latch name. */
const SHARED_WAITS = new ClientLocal(() => new Map<string, SharedWait>());

/** An attempt's outcome for `count`: `null` when the latch is open, else how long to park. */
const recheckAfter = (count: number): number | null => (count <= 0 ? null : LATCH_RECHECK_MS);

/**
 * One check of the count (`null`: open, else how long to park), made of one GET for every check of
 * the same latch in one synchronous run of code: the first sends it at once, and the checks after
 * it join it until the run yields (its next microtask), unless this client writes the latch in
 * between. No reply or message reaches the client within a run, so a joined read tells a caller no
 * less than a GET of its own; its own writes are read. Single checks (`waitTime: 0`) and the
 * client's shared wait (see {@link RCountDownLatch.await}) check this way.
 */
function sharedCheck(ctx: ClientContext, name: string): Promise<number | null> {
  const joinable = ctx.local(JOINABLE_CHECKS);
  const joined = joinable.get(name);
  if (joined) return joined;
  const sent = latchCount(ctx.scripts, name).then(recheckAfter);
  joinable.set(name, sent);
  queueMicrotask(() => {
    if (joinable.get(name) === sent) joinable.delete(name);
  });
  return sent;
}

/**
 * A distributed count-down latch, stored and signalled exactly as Redisson's `RCountDownLatch`: a
 * STRING `<name>` holding the count (missing: zero, open), and
 * `redisson_countdownlatch__channel__{name}` carrying `0` when it reaches zero and `1` when it is
 * set or deleted. Get one from `RedissonClient.getCountDownLatch`.
 *
 * Every waiter wakes on every message and re-checks the count, as Redisson's do, so all of them
 * return once it is zero (or the latch was deleted), in every process. The `await` calls of one
 * client on one latch wait together, as one waiter: a message wakes it once, and one GET re-checks
 * for all of them; each call keeps its own wait time and signal.
 *
 * @example
 * ```ts
 * const latch = redisson.getCountDownLatch('migration-done');
 * await latch.trySetCount(1);
 * // in the migrating process: await latch.countDown();
 * if (!(await latch.await({ waitTime: 60_000 }))) throw new Error('migration still running');
 * ```
 * @category Synchronizers
 */
export class RCountDownLatch {
  private readonly channel: string;

  /** @internal Use `RedissonClient.getCountDownLatch`. */
  constructor(
    private readonly ctx: ClientContext,
    /** The latch's name: the key of its count. */
    readonly name: string,
  ) {
    this.channel = latchChannel(name);
  }

  /**
   * Sets the count unless a count is set (a latch still closed); resolves whether it did.
   * @throws {InvalidArgumentError} unless `count` is a positive integer up to 2^31-1.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * if (!(await latch.trySetCount(3))) console.log('another process set it first');
   * ```
   */
  async trySetCount(count: number): Promise<boolean> {
    checkPermits(count, 'count', 1);
    this.ctx.lifetime.throwIfAborted();
    this.writing();
    return trySetCount(this.ctx.scripts, this.name, count);
  }

  /**
   * Counts down by one; at zero the latch opens, its key goes and every waiter is woken. On an open
   * latch it does nothing.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * await latch.countDown();
   * ```
   */
  async countDown(): Promise<void> {
    this.ctx.lifetime.throwIfAborted();
    this.writing();
    await countDown(this.ctx.scripts, this.name);
  }

  /**
   * The count now (0: open).
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * console.log(`${await latch.getCount()} still to go`);
   * ```
   */
  async getCount(): Promise<number> {
    this.ctx.lifetime.throwIfAborted();
    return latchCount(this.ctx.scripts, this.name);
  }

  /**
   * Deletes the latch, which opens it (waiters are woken and find zero); resolves whether it existed.
   * @throws {ClientClosedError} after the client's `shutdown()`.
   * @example
   * ```ts
   * await latch.delete(); // releases every waiter, e.g. when aborting a job
   * ```
   */
  async delete(): Promise<boolean> {
    this.ctx.lifetime.throwIfAborted();
    this.writing();
    return deleteLatch(this.ctx.scripts, this.name);
  }

  /**
   * Waits until the count is zero; resolves `true` then, or `false` when a given `waitTime` runs
   * out first (`waitTime: 0`: a single check). Without `waitTime` it waits as long as it takes.
   * @throws {InvalidArgumentError} for bad options, before anything is sent.
   * @throws {ClientClosedError} when the client shuts down first.
   * @example
   * ```ts
   * await latch.await();                                      // as long as it takes
   * const open = await latch.await({ waitTime: 0 });          // a single check
   * await latch.await({ signal: AbortSignal.timeout(5_000) }); // rejects with the abort reason
   * ```
   */
  await(options?: LatchAwaitOptions): Promise<boolean> {
    return rejectingThrows(() => {
      const call = resolveSyncOptions(options, ['waitTime', 'signal'], 'await');
      this.ctx.lifetime.throwIfAborted();
      call.signal?.throwIfAborted();
      if (call.waitTime === 0) {
        const bound = new BoundedReply(this.name, 'await', 0, performance.now() + this.ctx.replyBound.grace, this.ctx.timers);
        const checked = bound.within(sharedCheck(this.ctx, this.name));
        const open = checked.then((outcome) => outcome === null);
        return reportSingleAttempt(this.ctx.emit, { kind: KIND, name: this.name, owner: '' }, call.signal, open);
      }
      return this.sharedWait().join(call.waitTime, call.signal);
    });
  }

  /** The wait this client's callers of `await` share for this latch, made by the first of them. */
  private sharedWait(): SharedWait {
    const { ctx, name } = this;
    const waits = ctx.local(SHARED_WAITS);
    let wait = waits.get(name);
    if (!wait) {
      const request = { name, kind: KIND, channel: this.channel, policy: wakeAll, backOff: fallbackBackOff, turnBound: LATCH_RECHECK_MS };
      const created: SharedWait = new SharedWait(ctx, request, () => sharedCheck(ctx, name), () => {
        if (waits.get(name) === created) waits.delete(name);
      });
      waits.set(name, created);
      wait = created;
    }
    return wait;
  }

  /** A count read sent before this client's write cannot answer a call made after it. */
  private writing(): void {
    this.ctx.local(JOINABLE_CHECKS).delete(this.name);
    this.ctx.local(SHARED_WAITS).get(this.name)?.invalidate();
  }
}
