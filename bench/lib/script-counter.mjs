// Counts, in this process, the script calls every ioredis client sends (EVALSHA and EVAL), by script:
// ioredisson's scripts are named after their file in lua/ (`fair-lock/acquire`), others by SHA-1.
// Unlike commandstats (all clients, a total of EVALSHA and EVAL, a NOSCRIPT retry counted twice),
// this tells an acquire attempt from an unlock. Off until `countScripts()`; cheap when on.
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import Redis from 'ioredis';
import { luaSource } from './floor.mjs';

const sha1 = (text) => createHash('sha1').update(text).digest('hex');

/** SHA-1 → `kind/script` for every script in lua/, its includes resolved as the library resolves them. */
const NAMES = new Map();
const root = new URL('../../lua/', import.meta.url);
for (const dir of readdirSync(root)) {
  if (dir === 'includes') continue;
  for (const file of readdirSync(new URL(`${dir}/`, root))) {
    if (file.endsWith('.lua')) NAMES.set(sha1(luaSource(`${dir}/${file.slice(0, -4)}`)), `${dir}/${file.slice(0, -4)}`);
  }
}

let counts;
let installed = false;

function install() {
  if (installed) return;
  installed = true;
  const send = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function sendCommand(command, stream) {
    if (counts && (command.name === 'evalsha' || command.name === 'eval')) {
      const first = String(command.args[0]);
      const sha = command.name === 'eval' ? sha1(first) : first;
      const name = NAMES.get(sha) ?? `script ${sha.slice(0, 8)}`;
      const map = counts;
      map.set(name, (map.get(name) ?? 0) + 1);
      // An EVALSHA answered NOSCRIPT is sent again as EVAL: one call, not two.
      if (command.name === 'evalsha') {
        command.promise.catch((error) => {
          if (/^NOSCRIPT/.test(error?.message ?? '')) map.set(name, map.get(name) - 1);
        });
      }
    }
    return send.call(this, command, stream);
  };
}

/** Starts (or restarts) counting from zero. */
export function countScripts() {
  install();
  counts = new Map();
}

/** The calls counted since `countScripts()`, by script; counting goes on from zero. */
export function takeScriptCounts() {
  const taken = Object.fromEntries(counts ?? []);
  counts = new Map();
  return taken;
}

/** Sum of several `{ script: calls }` maps. */
export function addCounts(maps) {
  const sum = {};
  for (const map of maps) for (const [name, n] of Object.entries(map ?? {})) sum[name] = (sum[name] ?? 0) + n;
  return sum;
}

// Calls of ioredisson's acquire scripts: `<kind>/acquire`, `<kind>/read-acquire`, `<kind>/try-acquire`, …
export const acquireCalls = (counts) => sumWhere(counts, (name) => /^[a-z-]+\/([a-z]+-)?acquire$/.test(name));
// Calls of ioredisson's unlock and release scripts: `<kind>/unlock`, `<kind>/write-unlock`, `<kind>/release`.
export const releaseCalls = (counts) => sumWhere(counts, (name) => /^[a-z-]+\/([a-z]+-)?(unlock|release)$/.test(name));

function sumWhere(counts, test) {
  return Object.entries(counts).reduce((n, [name, calls]) => n + (test(name) ? calls : 0), 0);
}
