import type Redis from 'ioredis';
import type { RedissonClient, RedissonOptions } from '../../../lib';
import { useRedis } from '../../helpers/fixture';
import { BUILD_TIMEOUT, buildPeer } from './build-peer';
import { JavaGroupLock, JavaLock, type JavaGroupValue, type JavaLockKind } from './java-lock';
import { JavaExpirableSemaphore, JavaFencedLock, JavaLatch, JavaSemaphore } from './java-sync';
import { JavaPeer, READY_TIMEOUT } from './peer';

/** What an interop test file works with. */
export interface Interop {
  /** A connection for raw reads (HGETALL, PTTL, ...). */
  admin: () => Redis;
  /** A new ioredisson client, shut down after the test. */
  client: (options?: RedissonOptions) => RedissonClient;
  /** The file's Java peer. */
  peer: () => JavaPeer;
  /** `name` as an RLock (or the RLock-shaped `kind`) of the peer, on a Java thread no other test has used. */
  javaLock: (name: string, kind?: JavaLockKind) => JavaLock;
  /** Redisson's `getMultiLock(group, values)` in the peer, on a fresh Java thread. */
  javaGroupLock: (group: string, values: readonly JavaGroupValue[]) => JavaGroupLock;
  /** `name` as an RFencedLock of the peer, on a fresh Java thread. */
  javaFencedLock: (name: string) => JavaFencedLock;
  /** `name` as an RSemaphore of the peer, on a fresh Java thread. */
  javaSemaphore: (name: string) => JavaSemaphore;
  /** `name` as an RPermitExpirableSemaphore of the peer, on a fresh Java thread. */
  javaExpirableSemaphore: (name: string) => JavaExpirableSemaphore;
  /** `name` as an RCountDownLatch of the peer, on a fresh Java thread. */
  javaLatch: (name: string) => JavaLatch;
}

/**
 * Per-file set-up: a throwaway redis-server (flushed before each test) and one JVM running the
 * Redisson peer, built first if its jar is stale. `lockWatchdogTimeout` configures the peer.
 */
export function useInterop({ lockWatchdogTimeout = 30_000 }: { lockWatchdogTimeout?: number } = {}): Interop {
  const redis = useRedis();
  let peer: JavaPeer | undefined;

  beforeAll(async () => {
    const jar = await buildPeer();
    peer = await JavaPeer.start(jar, redis.server().url, lockWatchdogTimeout);
  }, BUILD_TIMEOUT + READY_TIMEOUT);
  afterAll(async () => {
    await peer?.stop();
  });

  const requirePeer = (): JavaPeer => {
    if (!peer) throw new Error('the Java peer did not start');
    return peer;
  };
  return {
    admin: redis.admin,
    client: (options) => redis.client(options),
    peer: requirePeer,
    javaLock: (name, kind) => new JavaLock(requirePeer(), name, requirePeer().newThread(), kind),
    javaGroupLock: (group, values) => new JavaGroupLock(requirePeer(), group, values, requirePeer().newThread()),
    javaFencedLock: (name) => new JavaFencedLock(requirePeer(), name, requirePeer().newThread()),
    javaSemaphore: (name) => new JavaSemaphore(requirePeer(), name, requirePeer().newThread()),
    javaExpirableSemaphore: (name) => new JavaExpirableSemaphore(requirePeer(), name, requirePeer().newThread()),
    javaLatch: (name) => new JavaLatch(requirePeer(), name, requirePeer().newThread()),
  };
}
