// `npm run demo`: several processes contend for one lock on a throwaway local redis-server; the
// final counter proves that no update was lost.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

const WORKERS = 4;
const ITERATIONS = 200;

const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = /** @type {import('node:net').AddressInfo} */ (probe.address());
    probe.close(() => resolve(port));
  });
});
const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
  stdio: ['ignore', 'pipe', 'pipe'],
});
server.on('error', () => {
  console.error('redis-server was not found: install it (e.g. apt-get install redis-server) and retry.');
  process.exit(1);
});
// Connect only once the server says it listens: connecting earlier makes ioredis report ECONNREFUSED.
await /** @type {Promise<void>} */ (new Promise((resolve, reject) => {
  let output = '';
  const timer = setTimeout(() => reject(new Error(`redis-server not ready after 20 s:\n${output}`)), 20_000);
  const onData = (/** @type {string} */ chunk) => {
    output += chunk;
    if (!output.includes('Ready to accept connections')) return;
    clearTimeout(timer);
    server.stdout.resume();
    server.stderr.resume();
    resolve();
  };
  server.stdout.setEncoding('utf8').on('data', onData);
  server.stderr.setEncoding('utf8').on('data', onData);
  server.once('exit', (code) => reject(new Error(`redis-server exited (code ${code}) before it was ready:\n${output}`)));
}));
const url = `redis://127.0.0.1:${port}`;
const redis = new Redis(url);
redis.on('error', (error) => console.error(`demo connection: ${error.message}`));
await redis.ping();
console.log(`throwaway redis-server on ${url}; ${WORKERS} processes x ${ITERATIONS} locked increments\n`);

const started = performance.now();
const workers = Array.from({ length: WORKERS }, (_, i) =>
  spawn(process.execPath, ['examples/counter-worker.mjs', url, String(ITERATIONS), `process-${i + 1}`], {
    stdio: ['ignore', 'inherit', 'inherit'],
  }),
);
const codes = await Promise.all(workers.map(async (worker) => (await once(worker, 'exit'))[0]));
const elapsed = performance.now() - started;

const counter = Number(await redis.get('demo:counter'));
const expected = WORKERS * ITERATIONS;
console.log(`\ncounter = ${counter}, expected ${expected}: ${counter === expected ? 'no update lost' : 'UPDATES LOST'}`);
console.log(`${expected} lock hand-offs in ${(elapsed / 1000).toFixed(2)} s; lock keys left: ${await redis.dbsize() - 1}`);
redis.disconnect();
server.kill();
process.exit(counter === expected && codes.every((code) => code === 0) ? 0 : 1);
