import { MAX_TIME_MS } from '../options';
import { acquireWithWait, type WaitContext, type WaitRequest } from './acquisition';

/** What a {@link SharedWait}'s one acquisition is made of: its channel and bounds. */
export type SharedWaitRequest = Pick<WaitRequest<void>, 'channel' | 'policy' | 'backOff' | 'turnBound'>;

/** One caller of a {@link SharedWait}: its promise, its own time limit and signal. */
class SharedCaller {
  timer: NodeJS.Timeout | undefined;

  constructor(
    readonly wait: SharedWait,
    /** The first check that may answer it. */
    readonly answeredBy: number,
    readonly resolve: (reached: boolean) => void,
    readonly reject: (error: unknown) => void,
    readonly signal: AbortSignal | undefined,
  ) {}

  /** The caller's signal aborted (an object listener: no closure per caller). */
  handleEvent(): void {
    if (this.wait.leave(this)) this.reject(this.signal?.reason);
  }
}

function timeUp(caller: SharedCaller): void {
  caller.timer = undefined;
  if (caller.wait.leave(caller)) caller.resolve(false);
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
      const caller = new SharedCaller(this, this.joinable ? this.sent : this.sent + 1, resolve, reject, signal);
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
    const attempts = { attempt: () => this.attempt(), abandon: () => undefined, conclude: () => undefined };
    acquireWithWait(this.ctx, {
      ...this.request,
      attempts,
      waitTime: undefined,
      queueFirst: false,
      signal: this.stop.signal,
      callers: () => this.callers.size,
    }).catch((error: unknown) => this.fail(error));
  }

  /** The acquisition's attempt: checks until the state is not found, or every caller is answered. */
  private async attempt(): Promise<number | null> {
    for (;;) {
      const number = this.send();
      const outcome = await this.check();
      if (this.ended) return null;
      if (outcome !== null) return outcome;
      this.answer(number);
      if (this.ended) return null;
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
    for (const caller of callers) {
      this.forget(caller);
      caller.reject(error);
    }
  }

  private finish(): void {
    this.ended = true;
    this.onEnd();
  }

  private forget(caller: SharedCaller): void {
    if (caller.timer) clearTimeout(caller.timer);
    caller.signal?.removeEventListener('abort', caller);
  }
}
