import { isTransportError, surelyNotRun } from '../connection';
import { RedisUnavailableError } from '../errors';
import type { Logger } from '../options';
import { emitAcquired, emitAcquireFailed, giveUpReason, type Emit, type GiveUpReason } from './hold-events';
import type { PubSubManager, ShareOptions, Subscription } from './pubsub/manager';
import type { AttemptReport, Waiter } from './pubsub/wait-queue';
import type { WakePolicy } from './pubsub/wake';
import type { Due } from './leases/tracker';
import type { Linked, LinkedSet } from './linked-set';
import type { Timed, TimerQueue } from './timer-queue';

/** Runs the acquire attempts of one acquisition, and makes what it resolves. */
export interface AttemptSource<T> {
  /**
   * One attempt: `null` when acquired, else the holder's remaining TTL in ms (-1: none). `stats`
   * are the acquisition's figures so far, kept up to date as it goes on.
   */
  attempt(stats: WaitStats): Promise<number | null>;
  /** Who the acquisition's events name as holder, read when it ends (see `LockEvent.owner`). */
  readonly owner: string;
  /**
   * Told that the attempt in flight was abandoned (the signal aborted or the client closed before
   * its reply): should it succeed after all, the acquisition must be undone.
   */
  abandon(): void;
  /**
   * Offered `gift`, something this client is releasing, while the acquisition is parked: whether it
   * may serve what the acquisition waits for. Claimed, the acquisition attempts at once, and the
   * attempt must go out in one script with the release, so that Redis decides both in one step.
   * Absent: only messages and timers wake the acquisition.
   */
  claim?(gift: unknown): boolean;
  /**
   * Whether an attempt that failed in transit (its outcome unknown) may be sent again while time is
   * left: only when such an attempt takes back what it may have done, or counts once when repeated.
   * One that surely did not run (never sent, a CLUSTERDOWN reply) is tried again either way.
   * @default true
   */
  readonly resendsUncertain?: boolean;
  /**
   * What the acquisition resolves once it acquired (`true`) or its wait time ran out (`false`);
   * `ttl`: what the last attempt read of the holder's remaining TTL (-1: no expiry, or acquired).
   */
  conclude(acquired: boolean, stats: WaitStats, ttl: number): T | Promise<T>;
  /**
   * Told once when the acquisition ends without acquiring, whichever way (time-out, abort, error,
   * shutdown), before it settles: the place to undo what waiting left in Redis. May return that
   * clean-up (never rejecting): a time-out concludes once it is done.
   */
  gaveUp?(reason: GiveUpReason, stats: WaitStats): Promise<unknown> | undefined;
}

/** How an acquisition went, for metrics. */
export interface WaitStats {
  /** Time since the call, in ms. */
  readonly waitMs: number;
  /** Acquire attempts sent. */
  readonly attempts: number;
  /** Times a message (or a local hand-off) woke the waiter. */
  readonly wakeUps: number;
}

export type { GiveUpReason } from './hold-events';

/** Delays between re-checks when there is no channel to wait on (or no subscription could be made). */
export type BackOff = (failures: number) => number;

/** Bounds of the re-check back-off used when no subscription could be made. */
const FALLBACK_MIN_MS = 25;
const FALLBACK_MAX_MS = 1_000;

/** Doubling from 25 ms to 1 s, each delay jittered by ±50 %. */
export const fallbackBackOff: BackOff = (failures) =>
  Math.min(FALLBACK_MIN_MS * 2 ** failures, FALLBACK_MAX_MS) * (0.5 + Math.random());

/**
 * How long an acquisition waits for the reply of an attempt still in flight when its wait time
 * runs out, before it gives up with `RedisUnavailableError` (and takes back what the attempt may
 * do should it land later).
 */
export interface ReplyBound {
  /** Ms past the wait time. */
  readonly grace: number;
  /**
   * Whether some write was answered and now waits for its replicas (replica sync): Redis answers,
   * so the bound is extended once, by `syncGrace`.
   */
  syncing(): boolean;
  /** Ms the bound is extended by while replica sync runs: its own bound. */
  readonly syncGrace: number;
}

/** Something in progress that the client's shutdown must end at once. */
export interface Closable extends Linked<Closable> {
  close(error: Error): void;
}

/** What an acquisition needs from the client. */
export interface WaitContext {
  readonly pubsub: PubSubManager;
  /** Told when a subscription fails and the wait falls back to re-checks. */
  readonly logger: Logger;
  /** Aborted with `ClientClosedError` on shutdown. */
  readonly lifetime: AbortSignal;
  /**
   * Acquisitions under way, but for those parked on a channel (its wait queue holds them, and the
   * pub/sub manager closes it); the client closes them all on shutdown.
   */
  readonly pending: LinkedSet<Closable>;
  /** How long past its wait time an attempt in flight is waited for. */
  readonly replyBound: ReplyBound;
  /** Emits the client's events. */
  readonly emit: Emit;
  /** The timers of the client's waits, on one Node timer. */
  readonly timers: TimerQueue;
}

/**
 * One acquisition's wait. The acquisition keeps the request and reads its fields as it goes, so a
 * request may derive them on demand (fields of a parked waiter's request cost memory per waiter).
 */
export interface WaitRequest<T> {
  /** What is acquired (a lock's, semaphore's or latch's name), for errors and events. */
  name: string;
  /**
   * The kind's name in the `acquired` and `acquireFailed` events the acquisition emits as it ends;
   * `undefined`: it emits none (a shared wait reports for each of its callers instead).
   */
  kind: string | undefined;
  attempts: AttemptSource<T>;
  /** Channel whose messages announce a release; `undefined`: re-check on `backOff` alone (spin). */
  channel: string | undefined;
  /** How messages on `channel` wake local waiters. */
  policy: WakePolicy;
  /** Delays between re-checks without a subscription. */
  backOff: BackOff;
  /** Longest wait in ms; `undefined`: as long as it takes. */
  waitTime: number | undefined;
  /** Longest time in ms to wait for a turn behind local waiters before trying anyway (the lease). */
  turnBound: number;
  /**
   * Whether a newcomer that finds local waiters on the channel waits its turn behind them before
   * its first attempt. Off for what many may hold at once, or what opens for everyone: a
   * newcomer's attempt may succeed while they wait.
   * @default true
   */
  queueFirst?: boolean;
  /**
   * How long `channel` stays subscribed after this wait, in ms: for a waiter expected back soon on
   * the same channel, which then finds it subscribed (see {@link ShareOptions.linger}).
   * @default 0
   */
  linger?: number;
  signal: AbortSignal | undefined;
  /** How many callers the acquisition waits for, as diagnostics count them (a shared wait's). @default 1 */
  callers?: () => number;
  /**
   * Started when the acquisition first parks, and so only for one that waits (deadlock detection,
   * a semaphore's record of what its parked waiters want): may reject it with an error by calling
   * `fail`; returns what ends the watch, called once as the acquisition ends.
   */
  watch?: (fail: (error: Error) => void) => () => void;
}

/**
 * Tries to acquire, and while it cannot, waits for a release message on the channel, each wait
 * bounded by the TTL the attempt reported and by the time left. Resolves what the attempts make of
 * the outcome (acquired, or out of time); rejects with the signal's reason, `ClientClosedError`, or an attempt's error. A subscription that
 * cannot be made degrades to TTL-bounded re-checks with jittered back-off.
 *
 * Outages: an attempt that fails in transit is tried again on the back-off while time is left
 * (without a wait time: until the signal aborts); once the time is out it rejects with
 * `RedisUnavailableError` whose `cause` is the transport error. An attempt still unanswered when
 * the wait time runs out is waited for `replyBound.grace` ms more, then abandoned (taken back should
 * it land) and the wait rejects with `RedisUnavailableError` too.
 */
export function acquireWithWait<T>(ctx: WaitContext, request: WaitRequest<T>): Promise<T> {
  return new Promise<T>((resolve) => void new Acquisition(ctx, request, resolve));
}

/**
 * What only an acquisition that met trouble keeps (an attempt failed in transit or went unanswered,
 * or it waits without a subscription), made when it first does: a parked waiter costs less without it.
 */
interface Setbacks {
  /** Re-checks so far without a subscription, or attempts that failed in transit: the back-off's step. */
  failures: number;
  /** The transport error of the latest attempt that failed in transit, if any. */
  lastFailure: unknown;
  /** Set when the reply bound ran out: gives up after the I/O already received is handled. */
  overdue: NodeJS.Immediate | undefined;
  /** The reply bound was extended for replica sync. */
  extended: boolean;
}

/**
 * Where an acquisition is: between steps (subscribing, sleeping a back-off), waiting for an attempt's
 * reply, parked in its channel's wait queue, or ended.
 */
type Phase = 'between' | 'attempting' | 'parked' | 'done';

/**
 * One acquisition, run as a small state machine rather than an async loop: a parked waiter is this
 * object, its place in the client's timer queue and its promise, with no suspended frames. Each step
 * is started by the one before (an attempt's reply, the subscription, a wake-up, the timer), and
 * `end` ends it once. Thousands may be parked at once, so it keeps few fields: what can be derived
 * is, what only trouble needs is made on demand ({@link Setbacks}), and its promise is settled
 * through its resolving function alone (a failure resolves it with a rejected promise).
 */
class Acquisition<T> implements Waiter, Closable, WaitStats, Timed {
  /**
   * @internal The links of the one {@link LinkedSet} it is in: the client's acquisitions under way,
   * or while parked its channel's wait queue.
   */
  prevLinked: (Closable & Waiter) | undefined;
  /** @internal See {@link prevLinked}. */
  nextLinked: (Closable & Waiter) | undefined;
  /**
   * The channel's subscription; `undefined` until one is taken, `null` when there is none to be had
   * (no channel, or the SUBSCRIBE failed): the wait re-checks on a timer instead.
   */
  private subscription: Subscription | null | undefined;
  private phase: Phase = 'between';
  /** @internal The wait timer's (see {@link Timed}). */
  dueAt = 0;
  /** @internal The wait timer's (see {@link Timed}). */
  queueIndex = -1;
  private setbacks: Setbacks | undefined;
  /** Ends the request's watch, once started. */
  private unwatch: (() => void) | undefined;
  /**
   * When the call was made (monotonic ms), rounded down to a whole ms: a whole number is kept in the
   * field itself, a fraction would cost a heap number per waiter.
   */
  private readonly startedAt = Math.floor(performance.now());
  attempts = 0;
  wakeUps = 0;

  get waitMs(): number {
    return performance.now() - this.startedAt;
  }

  /**
   * When the wait time runs out (monotonic ms); `Infinity` without one. A wait gets back the part of
   * a ms `startedAt` lost to rounding, so that it never ends early; a single attempt (`waitTime` 0)
   * has no wait to end.
   */
  private get deadline(): number {
    const { waitTime } = this.request;
    if (waitTime === undefined) return Infinity;
    return waitTime === 0 ? this.startedAt : this.startedAt + waitTime + 1;
  }

  /** Starts at once; settles its promise through `resolve`. */
  constructor(
    private readonly ctx: WaitContext,
    private readonly request: WaitRequest<T>,
    private readonly resolve: (value: T | Promise<T>) => void,
  ) {
    const { waitTime, signal, channel } = request;
    if (channel === undefined) this.subscription = null;
    const stoppedBy = signal?.aborted ? signal : ctx.lifetime.aborted ? ctx.lifetime : undefined;
    if (stoppedBy) {
      this.phase = 'done';
      this.reject(stoppedBy.reason);
      return;
    }
    signal?.addEventListener('abort', this, { once: true });
    ctx.pending.add(this);
    // Behind local waiters, a newcomer takes its place in line instead of barging: its attempt would
    // beat theirs (it goes out at once, theirs only after the release message), starving them. It
    // subscribes before any attempt: once subscribed, it waits its turn (see `subscribed`).
    const queueFirst =
      waitTime !== 0 && channel !== undefined && ctx.pubsub.hasWaiters(channel) && request.queueFirst !== false;
    if (queueFirst) {
      // Local waiters share the channel: its SUBSCRIBE is most likely confirmed, and then it parks now.
      const shared = ctx.pubsub.shareConfirmed(channel, this.shareOptions);
      if (shared) this.subscribed(shared);
      else this.subscribe();
      return;
    }
    // On a channel already subscribed (shared, or lingering) a share taken before the first attempt
    // hears every release after it: no second attempt is needed once subscribed.
    if (waitTime !== 0 && channel !== undefined)
      this.subscription = ctx.pubsub.shareConfirmed(channel, this.shareOptions);
    this.attempt();
  }

  get callers(): number {
    return this.request.callers?.() ?? 1;
  }

  private get shareOptions(): ShareOptions {
    const { linger } = this.request;
    return linger ? { linger } : NO_LINGER;
  }

  /** Woken by a release message, or handed a local release: try again at once. */
  wake(report?: AttemptReport): void {
    this.wakeUps += 1;
    this.tryAgain(report);
  }

  /** Woken by the channel's TTL re-check: try again at once. */
  recheck(report: AttemptReport): void {
    this.tryAgain(report);
  }

  /** Out of the queue (or never in it): attempts at once, telling `report` the outcome. */
  private tryAgain(report: AttemptReport | undefined): void {
    this.ctx.pending.add(this);
    this.clearTimer();
    this.attempt(report);
  }

  /** Offered what this client is releasing, while parked: claimed if the attempts may use it (the queue then wakes it). */
  claim(gift: unknown): boolean {
    return this.request.attempts.claim?.(gift) === true;
  }

  /** The client is closing (called by the queue, or by the client for acquisitions not parked). */
  close(error: Error): void {
    this.fail(error);
  }

  /** The signal aborted (an object listener: no closure per acquisition). */
  handleEvent(): void {
    this.fail(this.request.signal?.reason);
  }

  /** @internal The wait's timer fired (while an attempt is in flight: its reply bound ran out). */
  timeUp(): void {
    if (this.phase === 'attempting') return this.replyOverdue();
    if (this.phase === 'parked') this.unpark();
    this.attempt();
  }

  /** Takes a parked acquisition out of its channel's queue, back into the client's set. */
  private unpark(): void {
    this.subscription?.leave(this);
    this.ctx.pending.add(this);
    this.phase = 'between';
  }

  /**
   * Sends one attempt. `report`: who woke the acquisition for it and wants its outcome (a local
   * hand-off, the TTL re-check), kept by the reply's callbacks rather than in a field.
   */
  private attempt(report?: AttemptReport): void {
    if (this.phase === 'done') return report?.attempted(false);
    this.phase = 'attempting';
    this.attempts += 1;
    // Bounds the attempt's reply by the deadline plus the grace (no timer runs during an attempt).
    if (this.deadline !== Infinity) this.startTimer(this.deadline - performance.now() + this.ctx.replyBound.grace);
    this.request.attempts.attempt(this).then(
      (ttl) => this.attempted(ttl, report),
      (error: unknown) => this.attemptFailed(error, report),
    );
  }

  /**
   * No reply within the bound. Replica sync under way extends it once; otherwise the acquisition
   * gives up on the attempt, after the I/O already received (a timer can fire before a reply that
   * arrived during a stalled event loop is read).
   */
  private replyOverdue(): void {
    const bound = this.ctx.replyBound;
    const setbacks = this.setback();
    if (!setbacks.extended && bound.syncing()) {
      setbacks.extended = true;
      return this.startTimer(bound.syncGrace);
    }
    // Not unref'd: an unref'd immediate lets the loop sleep in its poll phase first (it runs this turn).
    setbacks.overdue = setImmediate(giveUpOnReply, this);
  }

  /** @internal The reply bound ran out and the I/O received meanwhile was handled. */
  noReply(): void {
    const setbacks = this.setback();
    setbacks.overdue = undefined;
    if (this.phase === 'attempting') this.fail(this.unavailable(setbacks.lastFailure));
  }

  /** The acquisition's {@link Setbacks}, made on first use. */
  private setback(): Setbacks {
    return (this.setbacks ??= { failures: 0, lastFailure: undefined, overdue: undefined, extended: false });
  }

  private unavailable(cause: unknown): RedisUnavailableError {
    return new RedisUnavailableError(this.request.name, 'acquire', this.request.waitTime, cause);
  }

  private attempted(ttl: number | null, report: AttemptReport | undefined): void {
    this.attemptSettled();
    if (this.setbacks) this.setbacks.lastFailure = undefined;
    this.clearTimer();
    report?.attempted(ttl === null);
    if (this.phase === 'done') return;
    if (ttl === null) return this.settle(true, -1);
    const left = this.deadline - performance.now();
    if (left <= 0) return this.settle(false, ttl);
    if (this.subscription === undefined) return this.subscribe();
    this.wait(left, ttl);
  }

  /**
   * A transport failure is tried again on the back-off while time is left, unless the attempt's
   * outcome is unknown and it cannot be sent twice; any other error rejects as it is.
   */
  private attemptFailed(error: unknown, report: AttemptReport | undefined): void {
    this.attemptSettled();
    this.clearTimer();
    report?.attempted(false);
    if (this.phase === 'done') return;
    if (!isTransportError(error)) return this.fail(error);
    const setbacks = this.setback();
    setbacks.lastFailure = error;
    const left = this.deadline - performance.now();
    const resend = this.request.attempts.resendsUncertain !== false || surelyNotRun(error);
    if (!resend || left <= 0) return this.fail(this.unavailable(error));
    this.ctx.logger.debug('an acquire attempt failed in transit; trying again within the wait', {
      name: this.request.name,
      error,
    });
    this.startTimer(Math.min(left, this.request.backOff(setbacks.failures)));
    setbacks.failures += 1;
  }

  private attemptSettled(): void {
    if (this.phase === 'attempting') this.phase = 'between';
  }

  private subscribe(): void {
    const { channel, policy, signal } = this.request;
    if (channel === undefined) return;
    this.ctx.pubsub.subscribe(channel, policy, this.deadline - performance.now(), signal, this.shareOptions).then(
      (subscription) => this.subscribed(subscription),
      (error: unknown) => this.subscribeFailed(error),
    );
  }

  /** Subscribed: a newcomer queued behind local waiters (no attempt yet) waits its turn, bounded; others attempt. */
  private subscribed(subscription: Subscription): void {
    if (this.phase === 'done') return subscription.release(false);
    this.subscription = subscription;
    if (this.attempts === 0) this.wait(Math.min(this.request.turnBound, this.deadline - performance.now()));
    else this.attempt();
  }

  /**
   * Without a subscription the wait re-checks on a back-off instead. A permission error is not
   * waited out: falling back would hide a misconfigured ACL behind slow polling, so it rejects.
   */
  private subscribeFailed(error: unknown): void {
    if (this.phase === 'done') return;
    if (isPermissionError(error)) return this.fail(error);
    this.ctx.logger.debug('subscription failed; waiting on TTL-bounded re-checks instead', {
      channel: this.request.channel,
      error,
    });
    this.subscription = null;
    this.attempt();
  }

  /**
   * Parks until a release message or the channel's TTL re-check wakes it, or until `bound` ms pass.
   * `ttl`: what the attempt before read (-1: no expiry); absent: no attempt yet (a turn behind local
   * waiters). Degraded, it sleeps a back-off step, at most the TTL.
   */
  private wait(bound: number, ttl?: number): void {
    // Read once until watched: a request may derive `watch` anew on each read.
    const watch = this.unwatch ? undefined : this.request.watch;
    if (watch) this.unwatch = watch((error) => this.fail(error));
    if (this.subscription) {
      // Parked, it is in its channel's queue instead of the client's set (see `WaitContext.pending`).
      this.ctx.pending.delete(this);
      try {
        if (!this.subscription.park(this, ttl)) return this.tryAgain(undefined);
      } catch (error) {
        return this.fail(error);
      }
      this.phase = 'parked';
      this.startTimer(bound);
    } else {
      const expiry = ttl !== undefined && ttl >= 0 ? ttl : Infinity;
      const setbacks = this.setback();
      this.startTimer(Math.min(bound, expiry, this.request.backOff(setbacks.failures)));
      setbacks.failures += 1;
    }
  }

  private startTimer(ms: number): void {
    this.ctx.timers.schedule(this, ms);
  }

  private clearTimer(): void {
    this.ctx.timers.cancel(this);
    const setbacks = this.setbacks;
    if (!setbacks?.overdue) return;
    clearImmediate(setbacks.overdue);
    setbacks.overdue = undefined;
  }

  /** Resolves what the attempts make of the outcome; `ttl`: what the last attempt read (see `conclude`). */
  private settle(acquired: boolean, ttl: number): void {
    const ended = this.end(acquired, 'timeout');
    if (ended === false) return;
    if (acquired) this.reportAcquired();
    const { attempts } = this.request;
    try {
      this.resolve(
        ended === true
          ? attempts.conclude(acquired, this, ttl)
          : ended.then(() => attempts.conclude(acquired, this, ttl)),
      );
    } catch (error) {
      this.reject(error);
    }
  }

  /** Rejects the acquisition's promise with `error`, through its resolving function. */
  private reject(error: unknown): void {
    this.resolve(Promise.reject(error));
  }

  /** Rejects; an attempt still in flight is abandoned, so that a late success is undone. */
  private fail(error: unknown): void {
    if (this.phase === 'done') return;
    if (this.phase === 'attempting') this.request.attempts.abandon();
    void this.end(false, this.reasonOf(error)); // a rejection waits for no clean-up
    this.reject(error);
  }

  private reasonOf(error: unknown): GiveUpReason {
    return giveUpReason(error, this.request.signal);
  }

  /**
   * Emits `acquired`; or, when the caller aborted or the client closed as the attempt landed (what
   * it took is given back), `acquireFailed`.
   */
  private reportAcquired(): void {
    const { kind, name, attempts, signal } = this.request;
    const { emit, lifetime } = this.ctx;
    const cancelledBy = signal?.aborted ? signal : lifetime.aborted ? lifetime : undefined;
    if (kind === undefined || !emit.heard(cancelledBy ? 'acquireFailed' : 'acquired')) return;
    const holder = { kind, name, owner: attempts.owner };
    if (cancelledBy) emitAcquireFailed(emit, holder, this.reasonOf(cancelledBy.reason), this);
    else emitAcquired(emit, holder, this);
  }

  /**
   * Leaves everything the acquisition joined, once. Returns `false` when it had ended already; else
   * the give-up's clean-up if it returned one (see {@link AttemptSource.gaveUp}), or `true`.
   */
  private end(acquired: boolean, reason: GiveUpReason): Promise<unknown> | boolean {
    if (this.phase === 'done') return false;
    const parked = this.phase === 'parked';
    this.phase = 'done';
    this.clearTimer();
    this.unwatch?.();
    if (parked) this.subscription?.leave(this);
    else this.ctx.pending.delete(this);
    this.request.signal?.removeEventListener('abort', this);
    this.subscription?.release(acquired);
    if (acquired) return true;
    const { kind, name, attempts } = this.request;
    if (kind !== undefined && this.ctx.emit.heard('acquireFailed')) {
      emitAcquireFailed(this.ctx.emit, { kind, name, owner: attempts.owner }, reason, this);
    }
    return attempts.gaveUp?.(reason, this) ?? true;
  }
}

/** Share options of a wait that does not linger. */
const NO_LINGER: ShareOptions = Object.freeze({});

/** Redis refused a command by ACL (`NOPERM`, or a script told it cannot run a command or channel). */
function isPermissionError(error: unknown): boolean {
  return error instanceof Error && /^NOPERM|can't (run|publish|access)/.test(error.message);
}

function giveUpOnReply(awaiting: { noReply(): void }): void {
  awaiting.noReply();
}

/**
 * Keeps the deadlines of bounded replies (see {@link BoundedReply}): calls an armed item's `timeUp`
 * once its `dueAt` has passed, unless it is cancelled first. The client's timer queue is one; the
 * lease tracker, whose timer a held lease keeps armed anyway, is another.
 */
export interface DeadlineKeeper {
  arm(item: Timed & Due): void;
  cancel(item: Timed & Due): void;
}

/**
 * The bound of a single reply, as an acquisition's attempt is bounded: the reply {@link within}
 * returns rejects with `RedisUnavailableError` (naming `name`, `operation` and `waitTime`) when it
 * fails in transit, or when it has not come by `dueAt` (monotonic ms, kept by `keeper`; once the
 * I/O received meanwhile was handled). No keeper: no time limit. Any other error passes through.
 * The deadline is armed as the bound is made, possibly before the call it bounds is sent, which
 * follows in the same run of code (the deadline cannot fire before it).
 *
 * A subclass may read the reply ({@link answered}) and see every failure ({@link failed}) in the
 * same step, without a promise of its own (a lock's release does).
 */
export class BoundedReply<T = unknown, R = T> implements Timed, Due {
  /** @internal The keeper's (see {@link Timed}). */
  queueIndex = -1;
  /** @internal The keeper's (see {@link Due}). */
  prevLinked: Due | undefined;
  /** @internal The keeper's (see {@link Due}). */
  nextLinked: Due | undefined;
  private overdue: NodeJS.Immediate | undefined;
  /** Rejects the bounded promise; `undefined` once it settled (a reply after the deadline is ignored). */
  private reject: ((error: unknown) => void) | undefined;

  constructor(
    private readonly name: string,
    private readonly operation: string,
    private readonly waitTime: number | undefined,
    /** @internal The keeper's (see {@link Timed}). */
    public dueAt = Infinity,
    private readonly keeper?: DeadlineKeeper,
  ) {
    keeper?.arm(this);
  }

  /** `reply`, bounded, as {@link answered} reads it; call once. */
  within(reply: Promise<T>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.reject = reject;
      reply.then(
        (value) => {
          if (!this.settled()) return;
          try {
            resolve(this.answered(value));
          } catch (error) {
            reject(error);
          }
        },
        (error: unknown) => {
          if (this.settled()) reject(this.failed(isTransportError(error) ? this.unavailable(error) : error));
        },
      );
    });
  }

  /** What the bounded promise resolves for the reply `value` (throw to reject): the value itself. */
  protected answered(value: T): R {
    return value as unknown as R;
  }

  /** Told of the error the bounded promise rejects with (in transit, refused, or no reply in time); returns it. */
  protected failed(error: unknown): unknown {
    return error;
  }

  /** @internal The deadline passed: rejects after the I/O already received is handled. */
  timeUp(): void {
    this.overdue = setImmediate(giveUpOnReply, this);
  }

  /** @internal The deadline passed and the I/O received meanwhile was handled. */
  noReply(): void {
    this.overdue = undefined;
    const reject = this.reject;
    this.reject = undefined;
    reject?.(this.failed(this.unavailable(undefined)));
  }

  /** The reply came: ends the deadline; whether it still counts (it did not come too late). */
  private settled(): boolean {
    this.keeper?.cancel(this);
    if (this.overdue) clearImmediate(this.overdue);
    const counts = this.reject !== undefined;
    this.reject = undefined;
    return counts;
  }

  private unavailable(cause: unknown): RedisUnavailableError {
    return new RedisUnavailableError(this.name, this.operation, this.waitTime, cause);
  }
}
