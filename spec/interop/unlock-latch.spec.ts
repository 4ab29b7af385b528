import type Redis from 'ioredis';
import { eventually } from '../helpers/redis-server';
import { describeInterop } from './helpers/java-tools';
import { useInterop } from './helpers/use-interop';

const LATCH_KEY = /^redisson_unlock_latch:\{(.+)\}:([0-9a-f]{32})$/;

interface LatchSet {
  key: string;
  value: string;
  px: number;
  at: number;
}

/** Latch writes and deletes seen by MONITOR (script commands included), with server times in ms. */
class LatchRecorder {
  readonly sets: LatchSet[] = [];
  readonly dels = new Map<string, number>();

  private constructor(private readonly monitor: Redis) {
    monitor.on('monitor', (time: string, args: string[]) => this.record(Number(time) * 1000, args));
  }

  static async start(admin: Redis): Promise<LatchRecorder> {
    return new LatchRecorder(await admin.monitor());
  }

  stop(): void {
    this.monitor.disconnect();
  }

  private record(at: number, [command = '', ...args]: string[]): void {
    const name = command.toLowerCase();
    if (name === 'set' && args[0]?.startsWith('redisson_unlock_latch:')) {
      const pxAt = args.findIndex((arg) => arg.toLowerCase() === 'px');
      this.sets.push({ key: args[0], value: args[1]!, px: Number(args[pxAt + 1]), at });
    } else if (name === 'del' || name === 'unlink') {
      for (const key of args) if (key.startsWith('redisson_unlock_latch:')) this.dels.set(key, at);
    }
  }
}

describeInterop('interop: unlock latches', () => {
  const { admin, client, javaLock } = useInterop();

  /** Holds `name` twice on one side, releases twice, and returns the latches that side wrote. */
  async function latchesOf(side: 'java' | 'node', name: string): Promise<{ sets: LatchSet[]; deleteDelays: number[] }> {
    const recorder = await LatchRecorder.start(admin());
    try {
      if (side === 'java') {
        const java = javaLock(name);
        await java.lock();
        await java.lock();
        await java.unlock();
        await java.unlock();
      } else {
        const node = client().getLock(name);
        await node.lock({ threadId: 1 });
        await node.lock({ threadId: 1 });
        await node.unlock({ threadId: 1 });
        await node.unlock({ threadId: 1 });
      }
      await eventually(() => recorder.sets.length === 2 && recorder.sets.every(({ key }) => recorder.dels.has(key)), 5_000, `${side} to delete its latches`);
      return { sets: recorder.sets, deleteDelays: recorder.sets.map(({ key, at }) => recorder.dels.get(key)! - at) };
    } finally {
      recorder.stop();
    }
  }

  it('Java and Node write the same latch keys, values and TTLs, and both delete them', async () => {
    const java = await latchesOf('java', 'latch:java');
    const node = await latchesOf('node', 'latch:node');

    for (const [side, { sets }] of [['java', java], ['node', node]] as const) {
      const name = `latch:${side}`;
      // One latch per unlock call: 0 after the reentrant release, 1 after the full one.
      expect(sets.map(({ value }) => value)).toEqual(['0', '1']);
      for (const { key, px } of sets) {
        expect(key).toMatch(LATCH_KEY);
        expect(LATCH_KEY.exec(key)![1]).toBe(name);
        // Redisson: (timeout 3000 + retry delay 1000..2000) x 4 attempts; ioredisson: 20000.
        expect(px).toBeGreaterThanOrEqual(16_000);
        expect(px).toBeLessThanOrEqual(20_000);
      }
      expect(new Set(sets.map(({ key }) => key)).size).toBe(2);
    }
    // Both delete each latch with a DEL written right behind the reply.
    for (const delay of [...java.deleteDelays, ...node.deleteDelays]) expect(delay).toBeLessThan(2_000);
    expect(await admin().keys('redisson_unlock_latch:*')).toEqual([]);
    expect(await admin().keys('*')).toEqual([]);
  });

  it('leaves nothing behind after a full release on either side', async () => {
    const java = javaLock('latch:left');
    const node = client().getLock('latch:left');
    await java.lock();
    await java.unlock();
    await node.lock({ threadId: 1 });
    await node.unlock({ threadId: 1 });
    await eventually(async () => (await admin().keys('*')).length === 0, 5_000, 'no keys left');
  });
});
