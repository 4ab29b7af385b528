import type { RedisConnection } from '../../lib';
import { lockKind } from '../contract/kinds';
import { lockContract, type ContractFixture } from '../contract/lock-contract';

/**
 * The least privileges RLock needs, as docs/security.md lists them: the commands of its scripts and reads,
 * keys of the locks (here `contract:*`), their channels (scripts get channels as KEYS too, as
 * Redisson's do) and latches. For `ACL SETUSER <user> reset ...`; the password is `locker-secret`.
 */
export const LOCK_USER_RULES = [
  'on',
  '>locker-secret',
  '~contract:*',
  '~redisson_lock__channel:*',
  '~redisson_unlock_latch:*',
  'resetchannels',
  '&redisson_lock__channel:*',
  '+evalsha',
  '+eval',
  '+info',
  '+subscribe',
  '+unsubscribe',
  '+exists',
  '+hget',
  '+hexists',
  '+pttl',
  '+del',
  '+hincrby',
  '+pexpire',
  '+hset',
  '+hdel',
  '+hlen',
  '+get',
  '+set',
  '+publish',
];

/** The user those rules are for. */
export const LOCK_USER = { username: 'locker', password: 'locker-secret' };

/**
 * The same user on a Cluster with sharded pub/sub, as docs/security.md lists it: the sharded forms of
 * publish and subscribe, and what ioredis's Cluster client and the `shardedPubSub: 'auto'` probe read.
 */
export const CLUSTER_LOCK_USER_RULES = [
  ...LOCK_USER_RULES.filter((rule) => !['+subscribe', '+unsubscribe', '+publish'].includes(rule)),
  '+spublish',
  '+ssubscribe',
  '+sunsubscribe',
  '+cluster|slots',
  '+cluster|info',
  '+pubsub|shardnumsub',
  '+wait',
];

/**
 * The RLock contract run as {@link LOCK_USER} (`kind` names the setting), on `fixture`'s deployment
 * (default: a standalone server); `prepare` sets the user there first.
 */
export function lockContractAsUser(
  kind: string,
  prepare: (admin: RedisConnection) => Promise<unknown>,
  fixture?: ContractFixture,
): void {
  lockContract({ ...lockKind('lock'), kind, user: LOCK_USER, prepare }, fixture);
}
