import { ClientClosedError, DeadlockError, RedisUnavailableError, type LockLostError } from '../errors';
import type { AcquisitionStats, RedissonEvents } from '../events';

/** Emits a client event: the client's `emit`, which never throws. */
export interface Emit {
  <K extends keyof RedissonEvents>(type: K, event: RedissonEvents[K]): void;
  /** Whether anyone listens to `type`: an event nobody hears is not built (the lock cycle's own cost). */
  heard(type: keyof RedissonEvents): boolean;
}

/** What an event is about: the kind's name (e.g. `'fair-lock'`), the name held, and its holder. */
export interface Holder {
  readonly kind: string;
  readonly name: string;
  /** An owner token, permit ids, or `''` when there is no single holder. */
  readonly owner: string;
}

/** Why an acquisition ended without acquiring. */
export type GiveUpReason = 'timeout' | 'aborted' | 'closed' | 'unavailable' | 'deadlock' | 'error';

/**
 * The reason an acquisition that rejected with `error` gave up for: the caller's own abort (`signal`'s
 * reason), the client's shutdown, Redis out of reach, a deadlock, or any other error.
 */
export function giveUpReason(error: unknown, signal: AbortSignal | undefined): GiveUpReason {
  if (error instanceof ClientClosedError) return 'closed';
  if (error instanceof RedisUnavailableError) return 'unavailable';
  if (error instanceof DeadlockError) return 'deadlock';
  return signal?.aborted && error === signal.reason ? 'aborted' : 'error';
}

/**
 * The one place every kind's events are made, so that each carries the same fields with the same
 * meaning (see `RedissonEvents`). The stats are copied: a wait passes itself, whose figures go on.
 */
export function emitAcquired(emit: Emit, holder: Holder, stats: AcquisitionStats): void {
  if (!emit.heard('acquired')) return;
  const { kind, name, owner } = holder;
  emit('acquired', { kind, name, owner, waitMs: stats.waitMs, attempts: stats.attempts, wakeUps: stats.wakeUps });
}

/** See {@link emitAcquired}. */
export function emitAcquireFailed(emit: Emit, holder: Holder, reason: GiveUpReason, stats: AcquisitionStats): void {
  if (!emit.heard('acquireFailed')) return;
  const { kind, name, owner } = holder;
  emit('acquireFailed', {
    kind,
    name,
    owner,
    reason,
    waitMs: stats.waitMs,
    attempts: stats.attempts,
    wakeUps: stats.wakeUps,
  });
}

/** See {@link emitAcquired}. */
export function emitReleased(emit: Emit, holder: Holder, fully: boolean, heldMs: number | undefined): void {
  if (!emit.heard('released')) return;
  const { kind, name, owner } = holder;
  emit('released', { kind, name, owner, fully, heldMs });
}

/** See {@link emitAcquired}; emits `holdLost`, then its deprecated alias `lockLost`. */
export function emitHoldLost(emit: Emit, holder: Holder, error: LockLostError): void {
  const { kind, name, owner } = holder;
  const event = { kind, name, owner, error };
  emit('holdLost', event);
  emit('lockLost', event);
}

/**
 * Emits the events of an acquisition made of a single attempt (a latch's `await` with `waitTime: 0`):
 * `reached` resolves whether it got what it asked for, and is passed on.
 */
export function reportSingleAttempt(
  emit: Emit,
  holder: Holder,
  signal: AbortSignal | undefined,
  reached: Promise<boolean>,
): Promise<boolean> {
  const startedAt = performance.now();
  const stats = (): AcquisitionStats => ({ waitMs: performance.now() - startedAt, attempts: 1, wakeUps: 0 });
  return reached.then(
    (got) => {
      if (got) emitAcquired(emit, holder, stats());
      else emitAcquireFailed(emit, holder, 'timeout', stats());
      return got;
    },
    (error: unknown) => {
      emitAcquireFailed(emit, holder, giveUpReason(error, signal), stats());
      throw error;
    },
  );
}
