import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import Redis from 'ioredis';
import { LockNotHeldError, RedissonClient } from '../lib';
import { HANDOFF_STREAK, LocalHandOff, type HandOff } from '../lib/kernel/hand-off';
import { usePubSubManager } from './helpers/pubsub-manager';
import type { AttemptReport, Waiter } from '../lib/kernel/pubsub/wait-queue';
import { wakeOne } from '../lib/kernel/pubsub/wake';
import { delay, useRedis } from './helpers/fixture';
import { ChaosProxy } from './helpers/proxy';
import { eventually, expectUnsubscribed } from './helpers/redis-server';

const { admin, client, server } = useRedis();
const WORKER = join(__dirname, '..', 'examples', 'counter-worker.mjs');

describe('local hand-off: a release passed straight to the next waiter of the same client', () => {
  it("sends the next waiter's attempt right behind the release: it holds the lock before the release's reply is back", async () => {
    const proxy = await ChaosProxy.start(Number(new URL(server().url).port));
    const redis = new Redis(proxy.url, { maxRetriesPerRequest: null });
    const redisson = new RedissonClient(redis);
    try {
      // One cycle first loads the scripts: after a NOSCRIPT reply the release is sent again, behind
      // the waiter's attempt, which then finds the lock still held and waits for the message.
      await (await redisson.getLock('pipelined').acquire()).release();
      const holder = await redisson.getLock('pipelined').acquire({ leaseTime: 30_000 });
      const next = redisson.getLock('pipelined').acquire({ leaseTime: 30_000 });
      next.catch(() => undefined);
      await eventually(() => redisson.diagnostics().waiters === 1, 5_000, 'a parked waiter');
      // Every reply now takes two seconds to come back; commands still reach Redis at once.
      proxy.set('down', { latencyMs: 2_000 });
      let releaseSettled = false;
      const release = holder.release().finally(() => (releaseSettled = true));
      const holderField = `${redisson.id}:${holder.threadId}`;
      const owners = async (): Promise<string[]> => Object.keys(await admin().hgetall('pipelined'));
      await eventually(async () => (await owners()).some((field) => field !== holderField), 1_800, 'the next holder in Redis');
      const [owner] = await owners();
      expect(releaseSettled).toBe(false);
      await release;
      proxy.heal();
      const handle = await next;
      expect(`${redisson.id}:${handle.threadId}`).toBe(owner);
      await handle.release();
      expect(await admin().exists('pipelined')).toBe(0);
    } finally {
      await redisson.shutdown();
      redis.disconnect();
      await proxy.close();
    }
  });

  it('lets another process have the lock while this client always has waiters to hand it to', async () => {
    // Four tasks of this client keep taking the lock in turn; each release has a local waiter to
    // hand it to. Every few releases are left to the message, so the other process gets its turns.
    const redisson = client();
    let running = true;
    let turns = 0;
    const tasks = [1, 2, 3, 4].map(async () => {
      while (running) {
        await redisson.getLock('demo:counter-lock').using(async () => {
          turns += 1;
          await delay(1);
        });
      }
    });
    await eventually(() => turns >= 20, 10_000, 'the local tasks to take turns');
    const turnsBefore = turns;
    const other = spawn(process.execPath, [WORKER, server().url, '3', 'other'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    other.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // A starved process is killed (exit code null) rather than left behind.
    const starved = setTimeout(() => other.kill('SIGKILL'), 20_000);
    const [code] = (await once(other, 'exit')) as [number | null];
    clearTimeout(starved);
    const localTurns = turns - turnsBefore;
    running = false;
    await Promise.all(tasks);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(await admin().get('demo:counter')).toBe('3');
    // The local tasks kept the lock busy while the other process waited: more than a streak of turns.
    expect(localTurns).toBeGreaterThan(HANDOFF_STREAK);
    expect(await admin().exists('demo:counter-lock')).toBe(0);
    await expectUnsubscribed(admin(), 'redisson_lock__channel:{demo:counter-lock}');
  }, 30_000);

  it('does not swallow the next release message when the handed-on attempt finds the lock taken', async () => {
    const redisson = client();
    const holder = await redisson.getLock('taken').acquire();
    const waiting = redisson.getLock('taken').acquire();
    await eventually(() => redisson.diagnostics().waiters === 1, 5_000, 'a parked waiter');
    // Another owner took the lock behind the holder's back (as after an expired lease).
    await admin().del('taken');
    await admin().hset('taken', 'java-client:1', 1);
    await admin().pexpire('taken', 30_000);
    await expect(holder.release()).rejects.toBeInstanceOf(LockNotHeldError);
    await eventually(() => redisson.diagnostics().waiters === 1, 5_000, 'the handed-on waiter to park again');
    // That owner releases as Redisson does: delete, then publish 0. The waiter's TTL bound is 30 s.
    const start = performance.now();
    await admin().del('taken');
    await admin().publish('redisson_lock__channel:{taken}', '0');
    const handle = await waiting;
    expect(performance.now() - start).toBeLessThan(10_000);
    await handle.release();
    await expectUnsubscribed(admin(), 'redisson_lock__channel:{taken}');
  });
});

/** A parked waiter that records its wake-ups. */
class RecordingWaiter implements Waiter {
  prevLinked: Waiter | undefined;
  nextLinked: Waiter | undefined;
  wakes = 0;
  handOffs: HandOff[] = [];
  wake(report?: AttemptReport): void {
    this.wakes += 1;
    if (report) this.handOffs.push(report as HandOff);
  }
  recheck(): void {
    throw new Error('no TTL was read: nothing to re-check');
  }
  close(): void {}
}

describe('hand-off accounting of the release message', () => {
  const withHandOff = LocalHandOff.over(wakeOne);
  const pubsub = usePubSubManager(server);

  /** Two waiters parked on `channel`, the first of them handed a release. */
  /** The hand-off strategy of a confirmed channel. */
  const handOffOf = (channel: string): LocalHandOff => pubsub().strategyOf(channel) as LocalHandOff;

  async function handedOn(channel: string): Promise<{ handOff: HandOff; first: RecordingWaiter; second: RecordingWaiter }> {
    const [first, second] = [new RecordingWaiter(), new RecordingWaiter()];
    for (const waiter of [first, second]) expect((await pubsub().subscribe(channel, withHandOff, 5_000)).park(waiter)).toBe(true);
    const handOff = handOffOf(channel).handOff();
    expect(handOff).toBeDefined();
    expect(first.handOffs).toEqual([handOff]);
    expect(second.wakes).toBe(0);
    return { handOff: handOff!, first, second };
  }

  const publish = (channel: string): Promise<number> => admin().publish(channel, '0');

  it('passes over the message of a release the handed-on waiter took, and heeds the next one', async () => {
    const { handOff, second } = await handedOn('c:taken');
    handOff.unlocked(true);
    handOff.attempted(true);
    await publish('c:taken');
    await delay(200);
    expect(second.wakes).toBe(0);
    await publish('c:taken');
    await eventually(() => second.wakes === 1, 5_000, 'the next message to wake the second waiter');
  });

  it('holds a message that comes before the outcome, and drops it once the waiter took the lock', async () => {
    const { handOff, second } = await handedOn('c:early');
    await publish('c:early');
    await delay(200);
    handOff.attempted(true);
    handOff.unlocked(true);
    await delay(100);
    expect(second.wakes).toBe(0);
    await publish('c:early');
    await eventually(() => second.wakes === 1, 5_000, 'the next message to wake the second waiter');
  });

  it('delivers a held message once the handed-on attempt failed', async () => {
    const { handOff, second } = await handedOn('c:failed');
    await publish('c:failed');
    await delay(200);
    expect(second.wakes).toBe(0);
    handOff.unlocked(true);
    handOff.attempted(false);
    await eventually(() => second.wakes === 1, 5_000, 'the held message to wake the second waiter');
  });

  it('heeds messages again once an expected echo has not come within its window', async () => {
    // A consumed hand-off whose release message is lost (a dropped connection would also reconnect,
    // but a proxy can lose data without that): the next real release must still wake a waiter.
    const { handOff, second } = await handedOn('c:lost-echo');
    handOff.unlocked(true);
    handOff.attempted(true);
    await delay(1_200);
    await publish('c:lost-echo');
    await eventually(() => second.wakes === 1, 5_000, 'the message after the window to wake the second waiter');
  });

  it('expects no message when the release did not free the lock', async () => {
    const { handOff, second } = await handedOn('c:not-freed');
    handOff.attempted(true);
    handOff.unlocked(false);
    await publish('c:not-freed');
    await eventually(() => second.wakes === 1, 5_000, 'the message to wake the second waiter');
  });

  it(`hands on at most ${HANDOFF_STREAK} releases in a row, then leaves one to the message`, async () => {
    const waiters = Array.from({ length: HANDOFF_STREAK + 2 }, () => new RecordingWaiter());
    for (const waiter of waiters) (await pubsub().subscribe('c:streak', withHandOff, 5_000)).park(waiter);
    for (let i = 0; i < HANDOFF_STREAK; i++) {
      const handOff = handOffOf('c:streak').handOff();
      expect(handOff).toBeDefined();
      handOff!.unlocked(false);
      handOff!.attempted(false);
    }
    expect(handOffOf('c:streak').handOff()).toBeUndefined();
    expect(handOffOf('c:streak').handOff()).toBeDefined();
    expect(waiters.map((w) => w.wakes)).toEqual([...Array<number>(HANDOFF_STREAK + 1).fill(1), 0]);
  });
});
