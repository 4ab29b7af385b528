import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import calculateSlot from 'cluster-key-slot';
import { useCluster } from '../helpers/cluster';
import { delay, within } from '../helpers/fixture';
import { eventually } from '../helpers/redis-server';

/*
 * A primary dies while three processes churn through eight locks on it (watchdog leases of 2 s),
 * once with replica sync on and once with it off. No waiter may hang, every lease that was lost
 * must be signalled on its handle, and the double grants (two processes holding one lock at once,
 * neither told it lost it) are counted and printed.
 */

const WORKER = join(__dirname, 'fixtures', 'churn-worker.mjs');
const WORKERS = 3;
const LOCKS = 8;

const cluster = useCluster({ masters: 3, replicas: 1, nodeTimeout: 2_000 });

interface Event {
  type: 'granted' | 'lost' | 'releasing' | 'released' | 'release-failed' | 'failed';
  id?: string;
  name: string;
  at: number;
  startedAt?: number;
  code?: string;
  message?: string;
  signalled?: boolean;
  worker: number;
}

/** `count` names whose slot the primary on `port` serves. */
async function namesOn(port: number, tag: string, count: number): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; names.length < count; i++) {
    const name = `{${tag}-${i}}:lock`;
    if ((await cluster().ownerOf(calculateSlot(name))) === port) names.push(name);
  }
  return names;
}

/** Grants of one lock that overlapped, neither holder having been told of a loss before the other's grant. */
function doubleGrants(events: Event[]): number {
  const holds = new Map<string, { name: string; worker: number; from: number; to: number }>();
  for (const event of events) {
    if (event.type === 'granted') holds.set(event.id!, { name: event.name, worker: event.worker, from: event.at, to: Infinity });
    else if (event.id && (event.type === 'lost' || event.type === 'releasing')) {
      const hold = holds.get(event.id);
      if (hold) hold.to = Math.min(hold.to, event.at);
    }
  }
  const byName = new Map<string, { worker: number; from: number; to: number }[]>();
  for (const hold of holds.values()) byName.set(hold.name, [...(byName.get(hold.name) ?? []), hold]);
  let overlaps = 0;
  for (const list of byName.values()) {
    list.sort((a, b) => a.from - b.from);
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length && list[j]!.from < list[i]!.to; j++) {
        if (list[j]!.worker !== list[i]!.worker) overlaps += 1;
      }
    }
  }
  return overlaps;
}

async function churn(sync: 'on' | 'off'): Promise<{ grants: number; doubles: number; lost: number; failed: Event[]; silent: number; afterKill: number }> {
  const primaries = await cluster().primaries();
  let primary = 0;
  for (const port of primaries) {
    if (await cluster().replicaOf(port).then(() => true, () => false)) {
      primary = port;
      break;
    }
  }
  expect(primary).not.toBe(0);
  const names = await namesOn(primary, `churn-${sync}`, LOCKS);
  const events: Event[] = [];
  const workers: ChildProcess[] = [];
  for (let i = 0; i < WORKERS; i++) {
    const worker = fork(WORKER, [JSON.stringify(cluster().nodes), names.join(','), sync], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    worker.on('message', (message) => events.push({ ...(message as Omit<Event, 'worker'>), worker: i }));
    workers.push(worker);
  }
  try {
    // Churn under way in every worker (process start-up is slow on a loaded machine) before the kill.
    await eventually(
      () => new Set(events.filter((e) => e.type === 'granted').map((e) => e.worker)).size === WORKERS && events.length > 100,
      30_000,
      'every worker churning',
    );
    await delay(500);
    const killedAt = performance.timeOrigin + performance.now();
    await cluster().kill(primary);
    await cluster().promotedAfter(primary);
    await delay(4_000); // churn on the promoted replica
    const afterKill = events.filter((e) => e.type === 'granted' && e.at > killedAt).length;
    for (const worker of workers) worker.send('stop');
    // No waiter hangs: every worker finishes its cycle (waits are 30 s at most) and exits.
    await within(
      Promise.all(workers.map((worker) => (worker.exitCode === null ? once(worker, 'exit') : Promise.resolve()))),
      45_000,
      'a worker did not finish within 45 s',
    );
    events.sort((a, b) => a.at - b.at);
    const lostIds = new Set(events.filter((e) => e.type === 'lost').map((e) => e.id));
    return {
      grants: events.filter((e) => e.type === 'granted').length,
      doubles: doubleGrants(events),
      lost: lostIds.size,
      failed: events.filter((e) => e.type === 'failed'),
      // A release that found the lock gone although its handle never signalled the loss.
      silent: events.filter((e) => e.type === 'release-failed' && e.code === 'ERR_LOCK_NOT_HELD' && !e.signalled).length,
      afterKill,
    };
  } finally {
    for (const worker of workers) if (worker.exitCode === null) worker.kill('SIGKILL');
  }
}

describe('a primary killed during lock churn (3 processes, 8 locks on it)', () => {
  const results: Record<string, Awaited<ReturnType<typeof churn>>> = {};

  it.each(['on', 'off'] as const)('with replica sync %s: no waiter hangs, every lost lease is signalled', async (sync) => {
    const result = await churn(sync);
    results[sync] = result;
    console.log(
      `failover churn, replica sync ${sync}: ${result.grants} grants (${result.afterKill} after the kill), ` +
        `${result.doubles} double grant(s), ${result.lost} lease(s) signalled lost, ${result.failed.length} acquisition(s) failed ` +
        `(${[...new Set(result.failed.map((e) => `${e.code}: ${e.message?.slice(0, 80)}`))].join('; ') || 'none'}), ${result.silent} silent loss(es)`,
    );
    expect(result.afterKill).toBeGreaterThan(0); // the churn went on after the failover
    expect(result.silent).toBe(0);
    expect(result.failed.filter((e) => e.code === 'ERR_LOCK_ACQUIRE_TIMEOUT')).toEqual([]);
  }, 180_000);

  afterAll(() => {
    const line = (sync: string) => (results[sync] ? `${results[sync].doubles} in ${results[sync].grants} grants` : 'not run');
    console.log(`double grants across a primary kill: replica sync on ${line('on')}; off ${line('off')}`);
  });
});
