import { isCluster, type RedisConnection } from '../connection';

/** How long answered unlocks' latches wait to be deleted together, in ms. */
const REAP_DELAY_MS = 20;
/** Most latches per DEL: a bounded command, and an argument list well inside the call-stack limit. */
const MAX_PER_DEL = 1_000;

/**
 * Deletes the unlock latches of answered unlock calls in batches: one DEL for every latch answered
 * within a few ms, instead of one write per unlock. Delaying is safe because a latch only serves
 * re-sends of a call whose reply was lost, and those latches are never handed to the reaper.
 */
export class LatchReaper {
  private pending: string[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly redis: RedisConnection) {}

  /** Queues `latch` for deletion. */
  add(latch: string): void {
    this.pending.push(latch);
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), REAP_DELAY_MS);
    this.timer.unref();
  }

  /** Deletes every queued latch now; resolves when Redis answered (errors are ignored). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const latches = this.pending;
    this.pending = [];
    if (latches.length === 0) return;
    // In a cluster the latches live in different slots, so each needs a DEL of its own.
    const perDel = isCluster(this.redis) ? 1 : MAX_PER_DEL;
    const deletions: Promise<number>[] = [];
    for (let i = 0; i < latches.length; i += perDel) deletions.push(this.redis.del(...latches.slice(i, i + perDel)));
    await Promise.allSettled(deletions);
  }
}
