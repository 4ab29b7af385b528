import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import {
  ClientClosedError,
  InvalidArgumentError,
  type BaseLock,
  type RedissonClient,
  type RedissonEvents,
} from '../lib';
import { LOCK_USER_RULES } from './helpers/acl';
import { delay, useRedis } from './helpers/fixture';
import { eventually, expectUnsubscribed, subscriberCount } from './helpers/redis-server';

const { admin, client, server } = useRedis();
const EXPIRED = '__keyevent@0__:expired';
const DELETED = '__keyevent@0__:del';
const EXITS = join(__dirname, 'fixtures', 'listener-exits.mjs');

/** Every name an `onExpired` and an `onDeleted` listener were called with. */
function recorder(): {
  expired: string[];
  deleted: string[];
  onExpired(name: string): void;
  onDeleted(name: string): void;
} {
  const heard = { expired: [] as string[], deleted: [] as string[] };
  return { ...heard, onExpired: (name) => heard.expired.push(name), onDeleted: (name) => heard.deleted.push(name) };
}

const KINDS: [string, (redisson: RedissonClient, name: string) => BaseLock][] = [
  ['RLock', (r, name) => r.getLock(name)],
  ['RFairLock', (r, name) => r.getFairLock(name)],
  ['RSpinLock', (r, name) => r.getSpinLock(name)],
  ['RFencedLock', (r, name) => r.getFencedLock(name)],
  ['RNonReentrantLock', (r, name) => r.getNonReentrantLock(name)],
  ['RNonReentrantFairLock', (r, name) => r.getNonReentrantFairLock(name)],
  ['RReadLock', (r, name) => r.getReadWriteLock(name).readLock()],
  ['RWriteLock', (r, name) => r.getReadWriteLock(name).writeLock()],
];

beforeAll(() => admin().config('SET', 'notify-keyspace-events', 'Egx'));

describe('lock listeners', () => {
  it.each(KINDS)(
    '%s: onDeleted hears unlock and forceUnlock, onExpired hears a lease running out, of its own name only',
    async (_kind, make) => {
      const redisson = client();
      const lock = make(redisson, 'listened');
      const other = make(redisson, 'other');
      const deleted: string[] = [];
      const expired: string[] = [];
      const ids = [
        await lock.addListener({ onDeleted: (name) => deleted.push(name) }),
        await lock.addListener({ onExpired: (name) => expired.push(name) }),
      ];
      expect(new Set(ids).size).toBe(2);

      await redisson.run(async () => {
        await other.lock();
        await other.unlock();
        await lock.lock();
        await lock.unlock();
      });
      await eventually(() => deleted.length === 1, 5_000, 'the deletion');
      await lock.lock({ leaseTime: 60_000, threadId: 3 });
      expect(await lock.forceUnlock()).toBe(true);
      await eventually(() => deleted.length === 2, 5_000, 'the forced deletion');
      await lock.lock({ leaseTime: 100, threadId: 4 });
      await eventually(() => expired.length === 1, 5_000, 'the expiry');
      await delay(100);
      expect({ deleted, expired }).toEqual({ deleted: ['listened', 'listened'], expired: ['listened'] });
      await Promise.all(ids.map((id) => lock.removeListener(id)));
    },
  );

  it('one object with both methods hears both; many listeners share one subscription per event', async () => {
    const redisson = client();
    const lock = redisson.getLock('both');
    const both = recorder();
    const first = await lock.addListener(both);
    const second = await redisson.getLock('else').addListener({ onDeleted: () => undefined });
    expect(await subscriberCount(admin(), DELETED)).toBe(1);
    expect(await subscriberCount(admin(), EXPIRED)).toBe(1);
    expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });

    await lock.lock({ leaseTime: 100 });
    await eventually(() => both.expired.length === 1, 5_000, 'the expiry');
    await admin().hset('both', 'x', '1');
    await admin().del('both');
    await eventually(() => both.deleted.length === 1, 5_000, 'the deletion');

    await lock.removeListener(first);
    expect(await subscriberCount(admin(), EXPIRED)).toBe(0);
    expect(await subscriberCount(admin(), DELETED)).toBe(1);
    await lock.removeListener(second);
    await lock.removeListener(second); // an unknown id: nothing
    expect(await subscriberCount(admin(), DELETED)).toBe(0);
  });

  it('removeListener stops the listener at once', async () => {
    const redisson = client();
    const lock = redisson.getLock('stopped');
    const heard = recorder();
    const id = await lock.addListener(heard);
    const stopping = lock.removeListener(id);
    await admin().set('stopped', '1');
    await admin().del('stopped');
    await stopping;
    await delay(200);
    expect(heard.deleted).toEqual([]);
  });

  it('hears the key with the connection keyPrefix and reports the name without it', async () => {
    const redisson = client({}, { keyPrefix: 'app:' });
    const heard = recorder();
    await redisson.getLock('prefixed').addListener(heard);
    await admin().set('prefixed', '1'); // not the lock's key
    await admin().del('prefixed');
    await admin().set('app:prefixed', '1');
    await admin().del('app:prefixed');
    await eventually(() => heard.deleted.length === 1, 5_000, 'the deletion');
    await delay(100);
    expect(heard.deleted).toEqual(['prefixed']);
  });

  it('subscribes again after the subscriber connection was killed, and hears again', async () => {
    const reconnected = jest.fn();
    const redisson = client();
    redisson.on('subscriberReconnected', reconnected);
    const heard = recorder();
    await redisson.getLock('revived').addListener(heard);
    expect(await admin().client('KILL', 'TYPE', 'pubsub')).toBe(1);
    await eventually(() => reconnected.mock.calls.length === 1, 10_000, 'the reconnect');
    await eventually(async () => (await subscriberCount(admin(), DELETED)) === 1, 5_000, 'the new subscription');
    await admin().set('revived', '1');
    await admin().del('revived');
    await eventually(() => heard.deleted.length === 1, 5_000, 'the deletion');
  });

  it('leaves no subscription after shutdown, and refuses listeners then', async () => {
    const redisson = client();
    const heard = recorder();
    const lock = redisson.getLock('closing');
    await lock.addListener(heard);
    await redisson.shutdown();
    // The server sees the subscriber's socket close a moment after the client does.
    await expectUnsubscribed(admin(), DELETED);
    await expectUnsubscribed(admin(), EXPIRED);
    expect(await admin().call('PUBSUB', 'NUMPAT')).toBe(0);
    await expect(lock.addListener(heard)).rejects.toBeInstanceOf(ClientClosedError);
  });

  it('rejects a listener with neither method before subscribing', async () => {
    const lock = client().getLock('bad');
    await expect(lock.addListener({} as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(lock.addListener(null as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await subscriberCount(admin(), DELETED)).toBe(0);
  });

  it('a listener that throws does not stop the others', async () => {
    const debug = jest.fn();
    const redisson = client({ logger: { debug } });
    const heard = recorder();
    await redisson.getLock('thrower').addListener({
      onDeleted: () => {
        throw new Error('boom');
      },
    });
    await redisson.getLock('thrower').addListener(heard);
    await admin().set('thrower', '1');
    await admin().del('thrower');
    await eventually(() => heard.deleted.length === 1, 5_000, 'the deletion');
    expect(debug).toHaveBeenCalledWith('a lock listener threw', expect.objectContaining({ name: 'thrower' }));
  });

  it('does not keep the process alive', async () => {
    const child = spawn(process.execPath, [EXITS, server().url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
    clearTimeout(timer);
    expect({ code, signal, out: out.trim() }).toEqual({ code: 0, signal: null, out: 'listening' });
  });
});

describe('the notify-keyspace-events setting', () => {
  afterEach(() => admin().config('SET', 'notify-keyspace-events', 'Egx'));

  it('is reported once per event when it leaves the event out; the listener hears it once enabled', async () => {
    await admin().config('SET', 'notify-keyspace-events', 'Ex');
    const redisson = client();
    const reports: RedissonEvents['keyspaceNotificationsOff'][] = [];
    redisson.on('keyspaceNotificationsOff', (event) => reports.push(event));
    const heard = recorder();
    await redisson.getLock('a').addListener(heard);
    await redisson.getLock('b').addListener({ onDeleted: (name) => heard.onDeleted(name) });
    await eventually(() => reports.length > 0, 5_000, 'the report');
    await delay(200);
    expect(reports).toEqual([{ event: 'deleted', setting: 'xE', needs: 'Eg' }]);

    await admin().config('SET', 'notify-keyspace-events', 'Egx');
    await admin().set('a', '1');
    await admin().del('a');
    await eventually(() => heard.deleted.length === 1, 5_000, 'the deletion');
  });

  it('is reported for both events when off altogether, and not when A covers them', async () => {
    await admin().config('SET', 'notify-keyspace-events', '');
    const off = client();
    const reports: string[] = [];
    off.on('keyspaceNotificationsOff', ({ event }) => reports.push(event));
    await off.getLock('a').addListener(recorder());
    await eventually(() => reports.length === 2, 5_000, 'two reports');
    expect(reports.sort()).toEqual(['deleted', 'expired']);

    await admin().config('SET', 'notify-keyspace-events', 'AE');
    const on = client();
    const none = jest.fn();
    on.on('keyspaceNotificationsOff', none);
    const debug = jest.fn();
    await client({ logger: { debug } }).getLock('a').addListener(recorder());
    await on.getLock('a').addListener(recorder());
    await delay(300);
    expect(none).not.toHaveBeenCalled();
    expect(debug).not.toHaveBeenCalled();
  });

  it('is only logged when CONFIG GET is refused (ACL), and the listener still works', async () => {
    await admin().call(
      'ACL',
      'SETUSER',
      'listener',
      'reset',
      ...LOCK_USER_RULES.filter((rule) => rule !== '~contract:*'),
      '~watched',
      '&__keyevent@*',
    );
    const debug = jest.fn();
    const redisson = client({ logger: { debug } }, { username: 'listener', password: 'locker-secret' });
    const none = jest.fn();
    redisson.on('keyspaceNotificationsOff', none);
    const heard = recorder();
    await redisson.getLock('watched').addListener(heard);
    await eventually(() => debug.mock.calls.length > 0, 5_000, 'the log');
    expect(debug).toHaveBeenCalledWith('lock listeners: could not read notify-keyspace-events', expect.anything());
    await redisson.getLock('watched').lock({ leaseTime: 100 });
    await eventually(() => heard.expired.length === 1, 5_000, 'the expiry');
    expect(none).not.toHaveBeenCalled();
    await admin().call('ACL', 'DELUSER', 'listener');
  });
});
