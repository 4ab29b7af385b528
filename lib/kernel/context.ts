import type { Lease } from './leases/lease';
import type { LeaseTracker } from './leases/tracker';
import type { Logger, ResolvedOptions } from '../options';
import type { OwnerScopes } from '../owner';
import type { ScriptRunner } from './scripts/runner';
import type { WaitContext } from './acquisition';
import type { HoldLedger } from './hold-ledger';
import type { DeadlockDetector } from './deadlocks';
import type { OwnerRecord } from './owner-record';

/** What a kind of lock tells the kernel about its holds: how to renew them. */
export interface HoldKind {
  /** Extends every hold of the batch its owner still has, to `leaseTime` ms; one flag per hold. */
  renew(scripts: ScriptRunner, batch: readonly Lease[], leaseTime: number): Promise<boolean[]>;
}

/**
 * State a primitive keeps per client, such as what its local waiters want: one instance per client,
 * made by `create` on first use ({@link ClientContext.local}) and dropped with the client.
 */
export class ClientLocal<T> {
  constructor(readonly create: (ctx: ClientContext) => T) {}
}

/** What a lock (or any primitive) needs from the client that made it. */
export interface ClientContext extends WaitContext {
  readonly clientId: string;
  readonly options: ResolvedOptions;
  /** The one script runner, with the publish command and the unlock latches. */
  readonly scripts: ScriptRunner;
  /** Every lease of the client. */
  readonly leases: LeaseTracker;
  readonly scopes: OwnerScopes;
  /** The client's record of itself, its labelled scopes and its waits; `undefined` without `ownerInfo` or `deadlockDetection`. */
  readonly ownerRecord: OwnerRecord | undefined;
  /** Watches parked lock waits for deadlocks; `undefined` without `deadlockDetection`. */
  readonly deadlocks: DeadlockDetector | undefined;
  /** Where what the library recovers from is reported. */
  readonly logger: Logger;
  /** The client's hold ledger for locks of `kind` (one per kind, made on first use). */
  ledger(kind: HoldKind): HoldLedger;
  /** The client's instance of `local` (one per client, made on first use). */
  local<T>(local: ClientLocal<T>): T;
}
