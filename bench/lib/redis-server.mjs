// A throwaway redis-server on a free loopback port, without persistence.
import { spawn } from 'node:child_process';
import net from 'node:net';
import Redis from 'ioredis';
import { track } from './procs.mjs';
import { sleep } from './stats.mjs';

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts redis-server (`REDIS_SERVER` or the one on the PATH) with `args` after the defaults and
 * resolves `{ url, port, stop }` once it answers PING.
 */
export async function startRedis(args = []) {
  const port = await freePort();
  const bin = process.env.REDIS_SERVER ?? 'redis-server';
  const defaults = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--maxclients', '20000'];
  const child = track(spawn(bin, [...defaults, ...args], { stdio: ['ignore', 'ignore', 'inherit'] }));
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  probe.on('error', () => undefined);
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch (error) {
      if (i > 100) throw error;
      probe.disconnect();
      await sleep(50);
    }
  }
  probe.disconnect();
  return {
    url,
    port,
    stop: () => new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', resolve);
      child.kill('SIGKILL');
    }),
  };
}
