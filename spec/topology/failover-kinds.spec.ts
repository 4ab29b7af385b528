import calculateSlot from 'cluster-key-slot';
import type Redis from 'ioredis';
import { RedissonClient, type RedissonOptions } from '../../lib';
import { latchChannel, semaphoreChannel } from '../../lib/keys';
import { LOCK_KINDS } from '../contract/kinds';
import { lockOf } from '../contract/lock-contract';
import { useCluster } from '../helpers/cluster';
import { eventually } from '../helpers/redis-server';
import { startSentinel, type TestSentinel } from '../helpers/sentinel';
import { channelsOn } from '../helpers/topology';

/*
 * Every primitive across a change of topology: on a Cluster (3 primaries, 1 replica each) the slot
 * of its name moves to another primary, or its primary is killed and a replica promoted; under
 * Sentinel the primary is killed. For each change, one client holds every primitive (locks with a
 * watchdog lease, a semaphore's only permit, a watchdog permit, a latch's last count) and another
 * waits on each. Then, per primitive: the hold survived (replica sync put it on the replica that took
 * over; its handle never signalled a loss, and the waiter did not get in), the waiter subscribed
 * again where its channel lives now, and it is woken by the release's message, well before it would
 * have re-checked by itself.
 */

/** What keeps the waiter out: a lock or permit handle, or a latch's count. */
interface Hold {
  /** Aborts if the hold is lost; a latch's count has none. */
  readonly signal?: AbortSignal;
  release(): Promise<unknown>;
}

/** One primitive as these tests drive it. */
interface Primitive {
  readonly kind: string;
  /** Takes `name` in `client`, keeping every other client out. */
  hold(client: RedissonClient, name: string): Promise<Hold>;
  /** Gets through `name` in `client` (waiting while it is held), then lets go again. */
  pass(client: RedissonClient, name: string): Promise<void>;
  /** Glob of the channels a waiter on `name` listens on; absent for a kind that polls. */
  readonly channels?: (name: string) => string;
  /** A wake within this long after the release (ms) came from the message, not a re-check of the waiter's own. */
  readonly wakeBound: number;
}

/**
 * A lock waiter parks for the holder's lease (30 s, the watchdog's); a semaphore or latch waiter
 * re-checks every 5 s (PERMIT_RECHECK_MS, LATCH_RECHECK_MS), so its bound stays below that.
 */
const LOCK_WAKE_BOUND = 10_000;
const SYNC_WAKE_BOUND = 4_000;

/** What {@link onePermit} needs of a semaphore. */
interface OnePermitSemaphore {
  trySetPermits(permits: number): Promise<boolean>;
  acquire(options?: object): Promise<Hold>;
}

/** A semaphore of one permit, which the holder takes with `holdOptions`. */
function onePermit(kind: string, of: (client: RedissonClient, name: string) => OnePermitSemaphore, holdOptions = {}): Primitive {
  return {
    kind,
    hold: async (client, name) => {
      await of(client, name).trySetPermits(1);
      return of(client, name).acquire(holdOptions);
    },
    pass: async (client, name) => {
      await (await of(client, name).acquire()).release();
    },
    channels: semaphoreChannel,
    wakeBound: SYNC_WAKE_BOUND,
  };
}

const PRIMITIVES: readonly Primitive[] = [
  ...LOCK_KINDS.map(
    (subject): Primitive => ({
      kind: subject.kind,
      // A shared lock (the read lock) is kept out by the lock that excludes it.
      hold: (client, name) => lockOf(client, subject.shared ? { ...subject, factory: subject.shared.excludedBy } : subject, name).acquire(),
      pass: async (client, name) => (await lockOf(client, subject, name).acquire()).release(),
      // The fair lock's waiters listen on channels of their own; the spin lock polls.
      channels: subject.waiterChannel
        ? (name) => subject.waiterChannel!(name, '*')
        : subject.channel('x') === undefined
          ? undefined
          : (name) => subject.channel(name)!,
      wakeBound: LOCK_WAKE_BOUND,
    }),
  ),
  onePermit('RSemaphore', (client, name) => client.getSemaphore(name)),
  onePermit('RPermitExpirableSemaphore', (client, name) => client.getPermitExpirableSemaphore(name), { watchdog: true }),
  {
    kind: 'RCountDownLatch',
    hold: async (client, name) => {
      await client.getCountDownLatch(name).trySetCount(1);
      return { release: () => client.getCountDownLatch(name).countDown() };
    },
    pass: async (client, name) => {
      if (!(await client.getCountDownLatch(name).await())) throw new Error(`latch ${name} did not open`);
    },
    channels: latchChannel,
    wakeBound: SYNC_WAKE_BOUND,
  },
];
const KINDS = PRIMITIVES.map((primitive) => primitive.kind);
/** Waiters that park on a channel (and so count in `diagnostics().waiters`). */
const PARKING = PRIMITIVES.filter((primitive) => primitive.channels).length;

/** A deployment about to change, as one `acrossChange` block drives it. */
interface Change {
  /** A client on the deployment. */
  client(options?: RedissonOptions): RedissonClient;
  /** One name per kind in `KINDS`, each where `disturb` changes the deployment. */
  names(): string[] | Promise<string[]>;
  /** Changes the deployment under the held names. */
  disturb(names: readonly string[]): Promise<void>;
  /** Data nodes alive now, to look for subscriptions on. */
  nodes(): Redis[] | Promise<Redis[]>;
}

/** A primitive held, and its waiter: `passed` resolves when it got through (performance.now()). */
interface Parked {
  readonly name: string;
  readonly hold: Hold;
  readonly passed: Promise<number>;
  /** Set once the waiter got through, or once it failed. */
  passedAt?: number;
  failed?: unknown;
}

/** One `describe` per change: everything held, waited on and disturbed once, then one test per kind. */
function acrossChange(title: string, change: () => Change | Promise<Change>): void {
  describe(title, () => {
    const parked = new Map<string, Parked>();
    const clients: RedissonClient[] = [];
    let nodes: Change['nodes'];

    /** What the clients logged (subscription trouble, retries), shown when a waiter does not park. */
    const logged: string[] = [];
    const logger = {
      debug: (message: string, details?: Record<string, unknown>) =>
        logged.push(`${message} ${details?.error instanceof Error ? details.error.message : JSON.stringify(details ?? '')}`),
    };
    const allParked = (waiter: RedissonClient, what: string): Promise<void> =>
      eventually(() => waiter.diagnostics().waiters === PARKING, 30_000, what).catch((error: Error) => {
        const state = [...parked].map(([kind, { passedAt, failed }]) =>
          failed ? `${kind} failed (${failed instanceof Error ? failed.message : JSON.stringify(failed)})` : passedAt === undefined ? `${kind} waiting` : `${kind} got through`,
        );
        throw new Error(`${error.message} (${JSON.stringify(waiter.diagnostics())}; ${state.join(', ')}); logged:\n${logged.join('\n')}`);
      });

    beforeAll(async () => {
      const deployment = await change();
      nodes = () => deployment.nodes();
      const holder = deployment.client({ logger });
      const waiter = deployment.client({ logger });
      clients.push(holder, waiter);
      const names = await deployment.names();
      for (const [i, primitive] of PRIMITIVES.entries()) {
        const name = names[i]!;
        const hold = await primitive.hold(holder, name);
        const entry: Parked = {
          name,
          hold,
          passed: primitive.pass(waiter, name).then(() => (entry.passedAt = performance.now())),
        };
        // The waiters of kinds a run filters out end with their client.
        entry.passed.catch((error: unknown) => (entry.failed = error));
        parked.set(primitive.kind, entry);
      }
      await allParked(waiter, 'every waiter parked');
      await deployment.disturb(names);
      // A waiter may have been woken to re-check; every one must be parked again, none let in.
      await allParked(waiter, 'every waiter parked again');
    }, 180_000);

    afterAll(async () => {
      await Promise.all(clients.map((client) => client.shutdown().catch(() => undefined)));
    });

    it.each(KINDS)('%s: the hold survives, and its waiter is woken by the release message', async (kind) => {
      const primitive = PRIMITIVES.find((entry) => entry.kind === kind)!;
      const entry = parked.get(kind)!;
      const { name, hold, passed } = entry;
      expect(hold.signal?.aborted ?? false).toBe(false);
      expect(entry.passedAt).toBeUndefined(); // nobody else got in while it was held
      if (primitive.channels) {
        const pattern = primitive.channels(name);
        await eventually(async () => (await channelsOn(await nodes(), pattern)).length > 0, 30_000, `a subscription to ${pattern}`);
      }
      const releasedAt = performance.now();
      await hold.release();
      expect((await passed) - releasedAt).toBeLessThan(primitive.wakeBound);
    });
  });
}

/**
 * ioredis retries a command while its slot has no primary for `maxRedirections` rounds of
 * `retryDelayOnFailover` / `retryDelayOnClusterDown`, 1.6 s by default; a failover (2 s node
 * timeout, then an election, on a loaded machine) takes longer, and a waiter whose command fails
 * meanwhile (the spin lock polls throughout) rejects with that error. Here: up to 20 s.
 */
const RIDE_OUT_FAILOVER = { maxRedirections: 100, retryDelayOnFailover: 200, retryDelayOnClusterDown: 200 } as const;

describe('every primitive on a Cluster with replicas', () => {
  const cluster = useCluster({ masters: 3, replicas: 1, nodeTimeout: 2_000 });
  const killed = new Set<number>();

  const onCluster = (options: RedissonOptions, change: Pick<Change, 'names' | 'disturb'>): Change => ({
    client: (extra) => new RedissonClient(cluster().connect(RIDE_OUT_FAILOVER), { ...options, ...extra }),
    nodes: () => cluster().all.filter(({ port }) => !killed.has(port)).map(({ port }) => cluster().direct(port)),
    ...change,
  });

  for (const mode of ['on', 'off'] as const) {
    acrossChange(`shardedPubSub ${mode}: after the slot of each name moved to another primary`, () =>
      onCluster(
        { shardedPubSub: mode },
        {
          names: () => KINDS.map((kind) => `move-${mode}-${kind}`),
          disturb: async (names) => {
            for (const name of names) {
              const slot = calculateSlot(name);
              const from = await cluster().ownerOf(slot);
              await cluster().moveSlot(slot, (await cluster().primaries()).find((port) => port !== from)!);
            }
          },
        },
      ),
    );
  }

  for (const mode of ['on', 'off'] as const) {
    acrossChange(`shardedPubSub ${mode}: after their primary was killed and its replica promoted`, async () => {
      // A primary that still has a replica (each run kills one).
      let primary = 0;
      for (const port of await cluster().primaries()) {
        if (await cluster().replicaOf(port).then(() => true, () => false)) primary = port;
      }
      expect(primary).not.toBe(0);
      return onCluster(
        { shardedPubSub: mode },
        {
          names: async () => {
            const names: string[] = [];
            for (const kind of KINDS) {
              let i = 0;
              while ((await cluster().ownerOf(calculateSlot(`kill-${mode}-${kind}-${i}`))) !== primary) i++;
              names.push(`kill-${mode}-${kind}-${i}`);
            }
            return names;
          },
          disturb: async () => {
            killed.add(primary);
            await cluster().kill(primary);
            await cluster().promotedAfter(primary);
          },
        },
      );
    });
  }
});

describe('every primitive under Sentinel (1 primary, 2 replicas, 3 sentinels)', () => {
  let group: TestSentinel;
  /** One connection per primary seen (`group.direct` opens a new one each call). */
  const primaries = new Map<number, Redis>();

  beforeAll(async () => {
    group = await startSentinel();
  }, 180_000);

  afterAll(async () => {
    await group?.stop();
  }, 60_000);

  acrossChange('after the primary was killed and a replica promoted', () => ({
    client: (options) => new RedissonClient(group.connect(), options),
    names: () => KINDS.map((kind) => `sentinel-${kind}`),
    disturb: async () => void (await group.killMaster()),
    nodes: async () => {
      const port = await group.masterPort();
      if (!primaries.has(port)) primaries.set(port, group.direct(port));
      return [primaries.get(port)!];
    },
  }));
});
