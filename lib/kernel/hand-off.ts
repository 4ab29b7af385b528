import type { ChannelWaiters, WakePolicy, WakeStrategy } from './pubsub/wake';
import type { AttemptReport } from './pubsub/wait-queue';

/** How long the echo of a local hand-off may take to arrive before other messages count again. */
const ECHO_WINDOW_MS = 1_000;

/**
 * Local hand-offs in a row, at most, before one release is left to its message, which wakes this
 * client's next waiter and every other process's alike: a busy process cannot keep the lock to itself.
 */
export const HANDOFF_STREAK = 8;

/**
 * Releases passed on to local waiters in a row (see {@link LocalPass}), at most, before one is left to
 * its message. Longer than a hand-off's streak: a pass costs one script and broadcasts nothing, while
 * a release left to its message costs an attempt in every process with waiters, all but one in vain.
 */
export const PASS_STREAK = 32;

/**
 * A release passed straight to a local waiter. As this client sends a release, its oldest local
 * waiter is woken at once, so that waiter's attempt follows the release on the same connection and
 * runs the moment the lock is free: a round trip sooner than waking on the reply or the message.
 *
 * The release's message still comes to the subscriber. Once both outcomes are known, it is passed
 * over if the release freed the lock and the waiter took it (no other local waiter could use it);
 * otherwise it wakes waiters as any message does.
 */
export class HandOff implements AttemptReport {
  private released: boolean | undefined;
  private acquired: boolean | undefined;

  /** `settle(consumed)` runs once, when both outcomes are known. */
  constructor(private readonly settle: (consumed: boolean) => void) {}

  /** The release's reply came (or failed): whether it freed the lock, publishing its message. */
  unlocked(released: boolean): void {
    if (this.released !== undefined) return;
    this.released = released;
    this.check();
  }

  /** The woken waiter's attempt settled: whether it took the lock. */
  attempted(acquired: boolean): void {
    if (this.acquired !== undefined) return;
    this.acquired = acquired;
    this.check();
  }

  private check(): void {
    if (this.released === undefined || this.acquired === undefined) return;
    this.settle(this.released && this.acquired);
  }
}

/**
 * What is left of a release's message once a local waiter took what the release freed: the message
 * to deliver still, or `undefined` for none (a lock: its one release is used up).
 */
export type Remainder = (message: string) => string | undefined;

const NOTHING_LEFT: Remainder = () => undefined;

/**
 * The wake strategy of a channel with local hand-off (opted into by a lock kind or a semaphore):
 * messages wake as `inner` says, except the echoes of releases a local waiter already took (what
 * `remainder` leaves of them), and messages that arrive while a hand-off's outcome is unknown wait
 * for it.
 */
export class LocalHandOff implements WakeStrategy {
  /** Messages still to come that local hand-offs have used already. */
  private echoes = 0;
  /** Until when (monotonic ms) those echoes are expected; later messages are heeded. */
  private echoesUntil = 0;
  /** Hand-offs whose outcome is not known yet. */
  private pending = 0;
  /** Messages held back until the hand-offs in flight settle. */
  private readonly held: string[] = [];
  /** Hand-offs in a row since a release was last left to the message. */
  private streak = 0;
  /** Counts reconnects: across one, a release's message may be lost, so none is expected. */
  private epoch = 0;

  constructor(
    private readonly waiters: ChannelWaiters,
    private readonly inner: WakeStrategy,
    private readonly remainder: Remainder = NOTHING_LEFT,
  ) {}

  /** A wake policy: `inner` with local hand-off on top. */
  static over(inner: WakePolicy, remainder?: Remainder): WakePolicy {
    return (waiters) => new LocalHandOff(waiters, inner(waiters), remainder);
  }

  /**
   * Call right after sending a release that should free the lock. Wakes the oldest local waiter now
   * and returns the {@link HandOff} to tell the release's outcome; `undefined` when no waiter was
   * handed the turn (none parked, or this release is the one of the streak left to the message).
   */
  handOff(): HandOff | undefined {
    const waiter = this.streak < HANDOFF_STREAK ? this.waiters.shift() : undefined;
    if (!waiter) {
      this.streak = 0;
      return undefined;
    }
    this.streak += 1;
    this.pending += 1;
    const epoch = this.epoch;
    const handOff = new HandOff((consumed) => this.settle(consumed && epoch === this.epoch));
    waiter.wake(handOff);
    return handOff;
  }

  deliver(message: string): void {
    if (this.pending > 0) this.held.push(message);
    else this.accept(message);
  }

  reset(): void {
    this.epoch += 1;
    this.echoes = 0;
    this.held.length = 0;
  }

  /**
   * A hand-off's outcome is known: if its waiter took the lock the release freed, that release's
   * message is used up, whether it came already (and is held) or is still to come.
   */
  private settle(consumed: boolean): void {
    this.pending -= 1;
    if (consumed) {
      if (this.held.length > 0) {
        const rest = this.remainder(this.held[0]!);
        if (rest === undefined) this.held.shift();
        else this.held[0] = rest;
      } else {
        this.echoes += 1;
        this.echoesUntil = performance.now() + ECHO_WINDOW_MS;
      }
    }
    if (this.pending > 0) return;
    for (const message of this.held.splice(0)) this.accept(message);
  }

  /** A message no hand-off is waiting for: what is left of it if it is an expected echo, else all of it. */
  private accept(message: string): void {
    let rest: string | undefined = message;
    if (this.echoes > 0) {
      this.echoes -= 1;
      if (performance.now() <= this.echoesUntil) rest = this.remainder(message);
    }
    if (rest !== undefined) this.inner.deliver(rest, this.waiters);
  }
}

/**
 * The wake strategy of a channel whose releases can carry local waiters' attempts (a semaphore's
 * permits, which have no owner in Redis): this client offers what it releases to its oldest parked
 * waiters first; those that claim it attempt at once, in the same script as the release, which
 * publishes only what they leave. Messages wake as `inner` says. After {@link PASS_STREAK} releases
 * in a row passed on, one is left to its message, which wakes other processes' waiters alike.
 */
export class LocalPass implements WakeStrategy {
  /** Releases in a row passed on to local waiters. */
  private streak = 0;

  constructor(
    private readonly waiters: ChannelWaiters,
    private readonly inner: WakeStrategy,
  ) {}

  /** A wake policy: `inner`, with releases passed on to local waiters first. */
  static over(inner: WakePolicy): WakePolicy {
    return (waiters) => new LocalPass(waiters, inner(waiters));
  }

  /**
   * Offers `gift`, one release, to the oldest parked waiter, then to the next while each claims what
   * it needs of it; returns whether any did. Refuses at once when the streak is used up.
   */
  pass(gift: unknown): boolean {
    if (this.streak >= PASS_STREAK) {
      this.streak = 0;
      return false;
    }
    let claimed = false;
    while (this.waiters.offer(gift)) claimed = true;
    this.streak = claimed ? this.streak + 1 : 0;
    return claimed;
  }

  deliver(message: string): void {
    this.inner.deliver(message, this.waiters);
  }
}
