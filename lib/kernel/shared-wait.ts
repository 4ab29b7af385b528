import { isTransportError } from '../connection';
import { RedisUnavailableError } from '../errors';
import { MAX_TIME_MS } from '../options';
import { acquireWithWait, type WaitContext, type WaitRequest, type WaitStats } from './acquisition';
import { emitAcquired, emitAcquireFailed, giveUpReason, type GiveUpReason } from './hold-events';

/**
 * What a {@link SharedWait}'s one acquisition is made of: its name, channel and bounds, and the
 * kind each caller's `acquired` or `acquireFailed` event names (the acquisition itself emits none).
 */
export type SharedWaitRequest = Pick<WaitRequest<void>, 'name' | 'kind' | 'channel' | 'policy' | 'backOff' | 'turnBound'>;

/** One caller of a {@link SharedWait}: its promise, its own time limit and signal. */
class SharedCaller {
  timer: NodeJS.Timeout | undefined;
  /** Its time ran out while a check was in flight: it waits for that check up to the reply grace. */
  overdue = false;
  /** Set once its reply grace ran out: settles it after the I/O already received is handled. */
  settling: NodeJS.Immediate | undefined;
  readonly joinedAt = performance.now();

  constructor(
    readonly wait: SharedWait,
    /** The first check that may answer it. */
    readonly answeredBy: number,
    readonly resolve: (reached: boolean) => void,
    readonly reject: (error: unknown) => void,
    readonly signal: AbortSignal | undefined,
    /** Its wait in ms, if it has one. */
    readonly waitTime: number | undefined,
    /** The shared acquisition's wake-ups when it joined. */
    readonly wakeUpsBefore: number,
  ) {}

  /** The caller's signal aborted (an object listener: no closure per caller). */
  handleEvent(): void {
    this.wait.rejectLeaving(this, this.signal?.reason, 'aborted');
  }
}

function timeUp(caller: SharedCaller): void {
  caller.timer = undefined;
  caller.wait.timeUp(caller);
}

function giveUpOnReply(caller: SharedCaller): void {
  caller.wait.noReply(caller);
}

/**
 * Local callers waiting for the same state, one that answers all of them alike once reached (a
 * latch is open), behind one acquisition: a message wakes it once, one check answers every caller,
 * and a caller keeps only its own time limit and signal.
 *
 * A check answers the callers that joined before it was sent, and those joining in the same run of
 * code as it was sent unless {@link invalidate}d meanwhile: no reply or message reaches the client
 * within a run, so for them it tells no less than a check of their own. Callers a check that found
 * the state cannot answer get the next one at once.
 *
 * Outages follow the acquisitions' rule: a caller whose time runs out while the checks fail in
 * transit rejects with `RedisUnavailableError` (their error its `cause`); one whose time runs out
 * with a check in flight waits `replyGrace` ms more for it, then rejects the same way.
 */
export class SharedWait {
  private readonly callers = new Set<SharedCaller>();
  private readonly stop = new AbortController();
  /** Checks sent so far. */
  private sent = 0;
  /** Whether the last check sent may still answer callers joining now. */
  private joinable = false;
  private started = false;
  private ended = false;
  /** A check is in flight. */
  private checking = false;
  /** The transport error of the latest check, while no check has answered since. */
  private failure: unknown;
  /** Callers past their time waiting for the check in flight. */
  private overdue = 0;
  /** The shared acquisition's figures, once it made its first attempt. */
  private stats: WaitStats | undefined;

  constructor(
    private readonly ctx: WaitContext,
    private readonly request: SharedWaitRequest,
    /** One check: `null` when the state is reached, else the longest park before the next (ms). */
    private readonly check: () => Promise<number | null>,
    /** Called once when the wait ends (every caller answered, or gone): make the next caller a new one. */
    private readonly onEnd: () => void,
  ) {}

  /**
   * Waits with the others: resolves `true` once a check finds the state, `false` when `waitTime` ms
   * (if given) pass first; rejects with `signal`'s reason, or with the acquisition's error.
   */
  join(waitTime: number | undefined, signal: AbortSignal | undefined): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      const answeredBy = this.joinable ? this.sent : this.sent + 1;
      const caller = new SharedCaller(this, answeredBy, resolve, reject, signal, waitTime, this.stats?.wakeUps ?? 0);
      this.callers.add(caller);
      signal?.addEventListener('abort', caller, { once: true });
      if (waitTime !== undefined) {
        caller.timer = setTimeout(timeUp, Math.min(waitTime, MAX_TIME_MS), caller);
        caller.timer.unref();
      }
      if (!this.started) this.start();
    });
  }

  /** A write by this client to what the checks read: a check sent before it answers no later caller. */
  invalidate(): void {
    this.joinable = false;
  }

  /**
   * @internal A caller's time ran out: it gets `false`, unless the checks are failing (it rejects
   * with `RedisUnavailableError`) or one is in flight (it waits for it up to the reply grace).
   */
  timeUp(caller: SharedCaller): void {
    if (!this.checking) {
      if (this.failure !== undefined) this.unavailable(caller);
      else this.timedOut(caller);
      return;
    }
    if (caller.overdue) {
      // After the I/O already received: a timer can fire before a reply a stalled loop has not read.
      // Not unref'd: an unref'd immediate lets the loop sleep in its poll phase first.
      caller.settling = setImmediate(giveUpOnReply, caller);
      return;
    }
    caller.overdue = true;
    this.overdue += 1;
    caller.timer = setTimeout(timeUp, this.ctx.replyBound.grace, caller);
    caller.timer.unref();
  }

  /** @internal A caller's reply grace ran out and the I/O received meanwhile was handled. */
  noReply(caller: SharedCaller): void {
    caller.settling = undefined;
    if (this.checking) this.unavailable(caller);
    else this.timedOut(caller);
  }

  private unavailable(caller: SharedCaller): void {
    this.rejectLeaving(caller, new RedisUnavailableError(this.request.name, 'await', caller.waitTime, this.failure), 'unavailable');
  }

  /** A caller still waiting gets `false`: its time ran out. */
  private timedOut(caller: SharedCaller): void {
    if (!this.leave(caller)) return;
    this.report(caller, 'timeout');
    caller.resolve(false);
  }

  /** @internal A caller still waiting rejects with `error` (its abort, Redis out of reach). */
  rejectLeaving(caller: SharedCaller, error: unknown, reason: GiveUpReason): void {
    if (!this.leave(caller)) return;
    this.report(caller, reason);
    caller.reject(error);
  }

  /** Emits a caller's `acquired` event (`reason` undefined: the state was reached) or `acquireFailed`. */
  private report(caller: SharedCaller, reason: GiveUpReason | undefined): void {
    const { kind, name } = this.request;
    if (kind === undefined) return;
    const stats = {
      waitMs: performance.now() - caller.joinedAt,
      // The checks sent since the first that could answer it.
      attempts: Math.max(this.sent - caller.answeredBy + 1, 0),
      wakeUps: (this.stats?.wakeUps ?? 0) - caller.wakeUpsBefore,
    };
    const holder = { kind, name, owner: '' };
    if (reason === undefined) emitAcquired(this.ctx.emit, holder, stats);
    else emitAcquireFailed(this.ctx.emit, holder, reason, stats);
  }

  /** @internal Takes a caller out (time-out, abort); returns whether it was still waiting. */
  leave(caller: SharedCaller): boolean {
    if (!this.callers.delete(caller)) return false;
    this.forget(caller);
    if (this.callers.size === 0 && !this.ended) {
      this.finish();
      this.stop.abort();
    }
    return true;
  }

  private start(): void {
    this.started = true;
    const attempts = { attempt: (stats: WaitStats) => this.attempt(stats), abandon: () => undefined, conclude: () => undefined, owner: '' };
    acquireWithWait(this.ctx, {
      ...this.request,
      kind: undefined,
      attempts,
      waitTime: undefined,
      queueFirst: false,
      signal: this.stop.signal,
      callers: () => this.callers.size,
    }).catch((error: unknown) => this.fail(error));
  }

  /** The acquisition's attempt: checks until the state is not found, or every caller is answered. */
  private async attempt(stats: WaitStats): Promise<number | null> {
    this.stats = stats;
    for (;;) {
      const number = this.send();
      const outcome = await this.checked();
      if (this.ended) return null;
      if (outcome !== null) {
        this.answerOverdue();
        return outcome;
      }
      this.answer(number);
      if (this.ended) return null;
    }
  }

  /** One check, noting whether it is in flight and whether it failed in transit. */
  private async checked(): Promise<number | null> {
    this.checking = true;
    try {
      const outcome = await this.check();
      this.failure = undefined;
      return outcome;
    } catch (error) {
      if (isTransportError(error)) this.failure = error;
      throw error;
    } finally {
      this.checking = false;
    }
  }

  /** A check found the state not reached: callers past their time that waited for it get `false`. */
  private answerOverdue(): void {
    if (this.overdue === 0) return;
    for (const caller of [...this.callers]) {
      if (caller.overdue) this.timedOut(caller);
    }
  }

  private send(): number {
    const number = ++this.sent;
    this.joinable = true;
    queueMicrotask(() => {
      if (this.sent === number) this.joinable = false;
    });
    return number;
  }

  /** Check `number` found the state: every caller it may answer returns `true`. */
  private answer(number: number): void {
    for (const caller of this.callers) {
      if (caller.answeredBy > number) continue;
      this.callers.delete(caller);
      this.forget(caller);
      this.report(caller, undefined);
      caller.resolve(true);
    }
    if (this.callers.size === 0) this.finish();
  }

  /** The acquisition failed (shutdown, an error): every caller rejects with its error. */
  private fail(error: unknown): void {
    if (this.ended) return;
    this.finish();
    const callers = [...this.callers];
    this.callers.clear();
    const reason = giveUpReason(error, undefined);
    for (const caller of callers) {
      this.forget(caller);
      this.report(caller, reason);
      caller.reject(error);
    }
  }

  private finish(): void {
    this.ended = true;
    this.onEnd();
  }

  private forget(caller: SharedCaller): void {
    if (caller.overdue) this.overdue -= 1;
    if (caller.timer) clearTimeout(caller.timer);
    if (caller.settling) clearImmediate(caller.settling);
    caller.signal?.removeEventListener('abort', caller);
  }
}
