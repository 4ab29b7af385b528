import { delay } from '../helpers/fixture';
import { eventually } from '../helpers/redis-server';
import { describeInterop } from './helpers/java-tools';
import { useInterop } from './helpers/use-interop';

/**
 * Java changes an object while one of Node's fast paths is under way (a release passed to a local
 * waiter, batched attempts, a pipelined hand-off, a latch's shared check, a fair lock's lingering
 * channel). Each test checks the invariant Redisson keeps: no more holders than the object allows,
 * exclusion, the latch open only at zero, first come first served. See docs/waiting.md.
 */

/** Long enough for a wrongly granted acquisition to have resolved, were it to: it needs no command. */
const SETTLE_MS = 300;
/** A wake-up by message must come well within this on a loaded 2-core machine. */
const WAKE_BOUND = 5_000;

/** Whether `pending` settles within `ms` (it is left running either way). */
async function settlesWithin(pending: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  pending.then(
    () => (settled = true),
    () => (settled = true),
  );
  await delay(ms);
  return settled;
}

describeInterop('interop: Java changes objects under Node fast paths', () => {
  const { admin, client, javaSemaphore, javaExpirableSemaphore, javaLatch, javaLock, peer } = useInterop();

  it('semaphore: a Java capacity cut holds against a Node release passed toward a parked waiter of the same client', async () => {
    const name = 'fast:semaphore:cut';
    const java = javaSemaphore(name);
    const redisson = client();
    const semaphore = () => redisson.getSemaphore(name);
    expect(await java.trySetPermits(2)).toBe(true);
    const first = await semaphore().acquire();
    const second = await semaphore().acquire();
    const third = semaphore().acquire({ waitTime: 30_000 });
    await eventually(() => redisson.diagnostics().waiters === 1, 10_000, 'the third owner parked');
    await java.addPermits(-1);
    expect(await java.availablePermits()).toBe(-1);

    await first.release();
    // Capacity 1, one holder: the release made the count 0, and the parked owner holds nothing.
    expect(await java.availablePermits()).toBe(0);
    expect(await settlesWithin(third, SETTLE_MS)).toBe(false);

    const releasedAt = performance.now();
    await second.release();
    const handle = await third;
    expect(performance.now() - releasedAt).toBeLessThan(WAKE_BOUND);
    expect(await java.availablePermits()).toBe(0);
    await handle.release();
    expect(await java.availablePermits()).toBe(1);
  });

  it('semaphore: permits Java adds while a Node release is passed on are shared by Java and Node waiters, never beyond capacity', async () => {
    const name = 'fast:semaphore:add';
    const java = javaSemaphore(name);
    const redisson = client();
    const semaphore = () => redisson.getSemaphore(name);
    expect(await java.trySetPermits(1)).toBe(true);
    const held = await semaphore().acquire();
    const nodeWaiter = semaphore().acquire({ waitTime: 30_000 });
    await eventually(() => redisson.diagnostics().waiters === 1, 10_000, 'the Node waiter parked');
    const javaWaiter = java.onThread(peer().newThread()).acquire();
    await delay(SETTLE_MS);
    // Capacity 2 now, 1 held: one of the two waiters gets the added permit, the other the release.
    await java.addPermits(1);
    await held.release();
    const [handle] = await Promise.all([nodeWaiter, javaWaiter]);
    expect(await java.availablePermits()).toBe(0);
    await handle.release();
    expect(await java.availablePermits()).toBe(1);
  });

  it('semaphore: Node attempts batched by one message obey a Java capacity cut made before the release', async () => {
    const name = 'fast:semaphore:batch';
    const java = javaSemaphore(name);
    const redisson = client();
    const semaphore = () => redisson.getSemaphore(name);
    expect(await java.trySetPermits(3)).toBe(true);
    await java.acquire(3);
    const waiting = Array.from({ length: 3 }, () => semaphore().acquire({ waitTime: 30_000 }));
    await eventually(() => redisson.diagnostics().waiters === 3, 10_000, 'three Node waiters parked');
    await java.addPermits(-1);
    // Java gives back its 3: the count is 2, and the message `2` wakes two waiters, which try together.
    await java.release(3);
    const settled = waiting.map(() => false);
    waiting.forEach((pending, i) => void pending.then(() => (settled[i] = true)));
    await eventually(() => settled.filter(Boolean).length === 2, WAKE_BOUND, 'two waiters served');
    // The third stays parked: the count covers two holders only.
    await delay(SETTLE_MS);
    const outcomes = [...settled];
    expect(outcomes.filter(Boolean)).toHaveLength(2);
    expect(await java.availablePermits()).toBe(0);
    expect(redisson.diagnostics().waiters).toBe(1);
    const handles = await Promise.all(waiting.filter((_, i) => outcomes[i]));
    for (const handle of handles) await handle.release();
    // The third takes one of the two released, leaving one.
    await (await Promise.all(waiting))[outcomes.indexOf(false)]!.release();
    expect(await java.availablePermits()).toBe(2);
  });

  it('expirable semaphore: a Node hand-off (the waiter’s attempt right behind the release) obeys a Java capacity cut', async () => {
    const name = 'fast:expirable:cut';
    const java = javaExpirableSemaphore(name);
    const redisson = client();
    const semaphore = () => redisson.getPermitExpirableSemaphore(name);
    expect(await java.trySetPermits(2)).toBe(true);
    const javaPermit = await java.acquire();
    const held = await semaphore().acquire();
    const waiter = semaphore().acquire({ waitTime: 30_000 });
    await eventually(() => redisson.diagnostics().waiters === 1, 10_000, 'the Node waiter parked');
    await java.addPermits(-1);
    await held.release();
    expect(await settlesWithin(waiter, SETTLE_MS)).toBe(false);
    expect(await java.availablePermits()).toBe(0);
    expect(await java.acquiredPermits()).toBe(1);

    await java.release(javaPermit);
    const handle = await waiter;
    expect(await java.acquiredPermits()).toBe(1);
    await handle.release();
    expect(await java.availablePermits()).toBe(1);
  });

  it('latch: a Java re-arm after a count-down is never answered by the Node client’s shared check of the opening', async () => {
    const name = 'fast:latch:rearm';
    const java = javaLatch(name);
    const redisson = client();
    expect(await java.trySetCount(1)).toBe(true);
    const waiting = Array.from({ length: 3 }, () => redisson.getCountDownLatch(name).await({ waitTime: 30_000 }));
    await eventually(() => redisson.diagnostics().waiters === 3, 10_000, 'three Node awaits parked');
    await java.countDown();
    expect(await Promise.all(waiting)).toEqual([true, true, true]);
    // Re-armed by Java: a Node await from now on sees a closed latch.
    expect(await java.trySetCount(1)).toBe(true);
    expect(await redisson.getCountDownLatch(name).await({ waitTime: SETTLE_MS })).toBe(false);
    const late = redisson.getCountDownLatch(name).await({ waitTime: 30_000 });
    await java.countDown();
    expect(await late).toBe(true);
    expect(await admin().exists(name)).toBe(0);
  });

  it('lock: a Node unlock handed to its local waiter, with a Java waiter woken by the same release, grants exactly one', async () => {
    const name = 'fast:lock:hand-off';
    const redisson = client();
    const lock = () => redisson.getLock(name);
    await lock().lock({ threadId: 1, leaseTime: 60_000 });
    const nodeWaiter = lock()
      .lock({ threadId: 2, leaseTime: 60_000 })
      .then(() => 'node');
    await eventually(() => redisson.diagnostics().waiters === 1, 10_000, 'the Node waiter parked');
    const java = javaLock(name);
    // Asked before its tryLock: the peer answers on the Java thread, which the wait then occupies.
    const javaOwner = `${peer().clientId}:${await peer().threadId(java.thread)}`;
    const javaWaiter = java.tryLock(30_000, 60_000).then((ok) => (ok ? 'java' : 'java gave up'));
    await delay(SETTLE_MS);
    await lock().unlock({ threadId: 1 });
    const first = await Promise.race([nodeWaiter, javaWaiter]);
    // One holder in Redis, and it is the one that resolved.
    const owners = Object.keys(await admin().hgetall(name));
    expect(owners).toHaveLength(1);
    expect(owners[0]).toBe(first === 'node' ? `${redisson.id}:2` : javaOwner);
    if (first === 'node') await lock().unlock({ threadId: 2 });
    else await java.unlock();
    expect(await (first === 'node' ? javaWaiter : nodeWaiter)).toBe(first === 'node' ? 'java' : 'node');
    expect(Object.keys(await admin().hgetall(name))).toEqual([first === 'node' ? javaOwner : `${redisson.id}:2`]);
  });

  it('fair lock: a Node owner back at once on its lingering channel queues behind a Java waiter that came first', async () => {
    const name = 'fast:fair:linger';
    const redisson = client();
    const fair = () => redisson.getFairLock(name);
    await fair().lock({ threadId: 1, leaseTime: 60_000 });
    const java = javaLock(name, 'fairLock');
    const order: string[] = [];
    const javaWaiter = java.tryLock(30_000, 60_000).then((ok) => order.push(ok ? 'java' : 'java gave up'));
    await eventually(
      async () => (await admin().llen(`redisson_lock_queue:{${name}}`)) === 1,
      15_000,
      'the Java waiter queued',
    );
    await fair().unlock({ threadId: 1 });
    const nodeAgain = fair()
      .lock({ threadId: 1, leaseTime: 60_000 })
      .then(() => order.push('node'));
    await javaWaiter;
    expect(order).toEqual(['java']);
    await java.unlock();
    await nodeAgain;
    expect(order).toEqual(['java', 'node']);
    await fair().unlock({ threadId: 1 });
  });
});
