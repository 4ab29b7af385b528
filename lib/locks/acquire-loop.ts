import type { PubSubManager, Subscription, WakePolicy } from '../pubsub/manager';
import { sleep, within } from '../util/guarded';

/** Runs the acquire attempts of one acquisition. */
export interface AttemptSource {
  /** One attempt: `null` when acquired, else the holder's remaining TTL in ms (-1: none). */
  attempt(): Promise<number | null>;
  /**
   * Told that the attempt in flight was abandoned (the signal aborted or the client closed before
   * its reply): should it succeed after all, the acquisition must be undone.
   */
  abandon(): void;
}

/** What the acquire loop needs from the client. */
export interface WaitContext {
  readonly pubsub: PubSubManager;
  /** Aborted with `ClientClosedError` on shutdown. */
  readonly lifetime: AbortSignal;
}

/** One acquisition's wait. */
export interface WaitRequest {
  attempts: AttemptSource;
  /** Channel whose messages announce a release. */
  channel: string;
  /** How messages on `channel` wake local waiters. */
  policy: WakePolicy;
  /** Longest wait in ms; `undefined`: as long as it takes. */
  waitTime: number | undefined;
  /** Longest time in ms to wait for a turn behind local waiters before trying anyway (the lease). */
  turnBound: number;
  signal: AbortSignal | undefined;
}

/** Bounds of the re-check back-off used when no subscription could be made. */
const FALLBACK_MIN_MS = 25;
const FALLBACK_MAX_MS = 1_000;

/**
 * Tries to acquire, and while it cannot, waits for a release message on the channel, each wait
 * bounded by the TTL the attempt reported and by the time left. Resolves whether it acquired.
 * A subscription that cannot be made degrades to TTL-bounded re-checks with jittered back-off.
 */
export async function acquireWithWait(ctx: WaitContext, request: WaitRequest): Promise<boolean> {
  const { waitTime, signal } = request;
  const deadline = waitTime === undefined ? Infinity : performance.now() + waitTime;

  // Behind local waiters, a newcomer takes its place in line instead of barging: its attempt would
  // beat theirs (it goes out at once, theirs only after the release message), starving them.
  const queueFirst = waitTime !== 0 && ctx.pubsub.hasWaiters(request.channel);
  if (!queueFirst) {
    if ((await attemptUnlessAborted(ctx, request)) === null) return true;
    if (deadline - performance.now() <= 0) return false;
  }

  const subscription = await subscribeOrDegrade(ctx, request, deadline - performance.now());
  let acquired = false;
  let fallbackDelay = FALLBACK_MIN_MS;
  try {
    if (queueFirst && subscription) {
      await subscription.wait(Math.min(request.turnBound, deadline - performance.now()), signal);
    }
    for (;;) {
      const ttl = await attemptUnlessAborted(ctx, request);
      if (ttl === null) return (acquired = true);
      const left = deadline - performance.now();
      if (left <= 0) return false;
      const bound = ttl >= 0 ? Math.min(ttl, left) : left;
      if (subscription) {
        await subscription.wait(bound, signal);
      } else {
        await sleep(Math.min(bound, fallbackDelay * (0.5 + Math.random())), signal, ctx.lifetime);
        fallbackDelay = Math.min(fallbackDelay * 2, FALLBACK_MAX_MS);
      }
    }
  } finally {
    subscription?.release(acquired);
  }
}

/** Runs one attempt, but rejects as soon as the signal aborts or the client closes. */
async function attemptUnlessAborted(ctx: WaitContext, request: WaitRequest): Promise<number | null> {
  const pending = request.attempts.attempt();
  let answered = false;
  pending.then(
    () => (answered = true),
    () => (answered = true),
  );
  try {
    return await within(pending, Infinity, () => new Error('unreachable'), request.signal, ctx.lifetime);
  } catch (error) {
    if (!answered) request.attempts.abandon();
    throw error;
  }
}

async function subscribeOrDegrade(
  ctx: WaitContext,
  { channel, policy, signal }: WaitRequest,
  timeoutMs: number,
): Promise<Subscription | undefined> {
  try {
    return await ctx.pubsub.subscribe(channel, policy, timeoutMs, signal);
  } catch {
    signal?.throwIfAborted();
    ctx.lifetime.throwIfAborted();
    return undefined;
  }
}
