import type { RedissonEvents } from '../events';
import type { ResolvedOptions } from '../options';
import type { OwnerScopes } from '../owner';
import type { RenewalScheduler } from '../renewal/scheduler';
import type { LockScripts } from '../scripts/lock';
import type { WaitContext } from './acquisition';

/** What a lock needs from the client that made it. */
export interface LockContext extends WaitContext {
  readonly clientId: string;
  readonly options: ResolvedOptions;
  readonly scripts: LockScripts;
  readonly renewal: RenewalScheduler;
  readonly scopes: OwnerScopes;
  emit<K extends keyof RedissonEvents>(type: K, event: RedissonEvents[K]): void;
}
