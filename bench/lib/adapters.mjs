// The adapter registry. An adapter module exports `name`, `pkg`, `waiting`, optionally
// `mutex = false` (the default when it has no `setup`), `floor = true` (a bound the targets do not
// count as a peer) with `floorOf` (the library adapter whose figures it divides in the "÷ floor"
// column), `variantOf: 'ioredisson'` (the library with other options: not a peer either, its cost
// against the plain adapter reported on its own), and `setup(ctx)` resolving `{ lock(key) -> release(), teardown(), diagnostics? }`
// (every acquisition its own owner). Other kinds: `setupSemaphore`, `setupReadWrite`, `setupLatch`, `setupRedLock`
// (see the scenarios that call them).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

export const ADAPTER_FILES = [
  'ioredisson',
  'ioredisson-fair',
  'ioredisson-diagnosed',
  'ioredisson-expirable',
  'raw',
  'ping',
  'fifo-floor',
  'floor-rlock',
  'floor-fair-lock',
  'floor-read-write',
  'floor-semaphore',
  'floor-expirable-semaphore',
  'floor-latch',
  'floor-redlock',
  'node-redisson',
  'simple-redis-mutex',
  'redis-semaphore',
  'redlock',
  'sesamecare-redlock',
];

const require = createRequire(import.meta.url);

/** Installed version of an npm package, read from its package.json. */
export async function packageVersion(pkg) {
  const root = new URL('../../', import.meta.url);
  const path = pkg === 'ioredisson' ? new URL('package.json', root) : require.resolve(`${pkg}/package.json`, { paths: [root.pathname] });
  return JSON.parse(await readFile(path, 'utf8')).version;
}

/** Loads the adapters named in `only` (all when empty); one that fails to load is kept with its error. */
export async function loadAdapters(only = []) {
  const files = only.length ? ADAPTER_FILES.filter((f) => only.includes(f)) : ADAPTER_FILES;
  return Promise.all(files.map(loadAdapter));
}

export async function loadAdapter(file) {
  try {
    const mod = await import(`../adapters/${file}.mjs`);
    return { id: file, ...mod, mutex: mod.mutex ?? typeof mod.setup === 'function', version: await packageVersion(mod.pkg).catch(() => '?') };
  } catch (error) {
    return { id: file, name: file, error: `cannot be loaded: ${error.message.split('\n')[0]}` };
  }
}
