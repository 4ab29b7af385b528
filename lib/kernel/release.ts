import { RedisUnavailableError, type LockNotHeldError } from '../errors';
import { BoundedReply } from './acquisition';
import type { ClientContext } from './context';
import type { HandOff } from './hand-off';
import { emitReleased } from './hold-events';
import type { HeldLock, HoldLedger } from './hold-ledger';
import type { LockKind, ReleaseResult } from './lock-kind';

/** What a {@link HoldRelease} needs of its lock. */
export interface Releasable {
  readonly ctx: ClientContext;
  readonly name: string;
  readonly kind: LockKind;
  readonly ledger: HoldLedger;
  notHeld(why: string, owner?: string): LockNotHeldError;
}

/**
 * One release of a hold: the kind's unlock call, bounded by the end of the hold's lease, and what
 * its reply means here (the ledger's count, the local hand-off, the `released` event), read in the
 * step that settles the bound: a release costs one object and one promise beyond its call.
 *
 * Fails with `RedisUnavailableError` when the call fails in transit or gets no reply in time: the
 * hold then counts again, no longer renewed (lost when its term ends).
 */
export class HoldRelease extends BoundedReply<ReleaseResult, void> {
  /** The ledger's record of the hold, if it had one (a hold taken before a restart has none). */
  private record: HeldLock | undefined;
  /** The local waiter handed the turn, told the outcome. */
  private handOff: HandOff | undefined;
  private leaseTime = 0;

  /** Arms the bound, ending at `leaseEnd` (monotonic ms; `undefined`: unbounded). */
  constructor(
    private readonly lock: Releasable,
    private readonly owner: string,
    private readonly sentAt: number,
    leaseEnd: number | undefined,
  ) {
    super(lock.name, 'release', undefined, leaseEnd, leaseEnd === undefined ? undefined : lock.ctx.leases);
  }

  /**
   * The release's outcome, once `reply` (the unlock call, just sent) is read. `record`: the hold
   * the ledger counted down for it; `leaseTime`: the lease left on remaining holds; `handOff`: the
   * local waiter woken right behind the call, if any.
   */
  send(
    reply: Promise<ReleaseResult>,
    record: HeldLock | undefined,
    leaseTime: number,
    handOff: HandOff | undefined,
  ): Promise<void> {
    this.record = record;
    this.leaseTime = leaseTime;
    this.handOff = handOff;
    return this.within(reply);
  }

  protected override answered(result: ReleaseResult): void {
    const { lock, record, owner } = this;
    this.handOff?.unlocked(result === 'released');
    if (result === 'decremented') {
      if (record && lock.kind.partialReleaseResetsLease !== false)
        lock.ledger.extend(record, this.sentAt, this.leaseTime);
    } else if (record) {
      // Redis says the owner holds nothing: holds still counted here are stale.
      lock.ledger.forget(record);
    }
    if (result === 'not-held') {
      throw lock.notHeld('it was never acquired, was already released, or its lease expired', owner);
    }
    const { emit } = lock.ctx;
    if (emit.heard('released')) {
      const heldMs = record ? performance.now() - record.heldSince : undefined;
      emitReleased(emit, { kind: lock.kind.kind, name: lock.name, owner }, result === 'released', heldMs);
    }
  }

  protected override failed(error: unknown): unknown {
    this.handOff?.unlocked(false);
    if (this.record && error instanceof RedisUnavailableError) this.lock.ledger.unreleased(this.record);
    return error;
  }
}
