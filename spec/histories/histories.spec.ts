import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkHistory, formatReport } from './check';
import { FAMILIES, type Family, type History } from './history';
import { runHistory, type FaultType } from './run';

/**
 * The randomized mixed-client history check (docs/history-checker.md). CI runs one fixed seed with
 * its budget; `npm run test:histories -- --seed S --ops N` sets them (HISTORY_SEED, HISTORY_OPS,
 * HISTORY_FAMILIES, HISTORY_FAULTS, HISTORY_CLIENTS, HISTORY_OWNERS); `--history FILE` (HISTORY_FILE) checks a recorded history again.
 */
const seed = Number(process.env.HISTORY_SEED ?? 20);
const opsPerKind = Number(process.env.HISTORY_OPS ?? 2_000);
const families = (process.env.HISTORY_FAMILIES?.split(',') ?? FAMILIES) as Family[];
const nodeClients = Number(process.env.HISTORY_CLIENTS ?? 3);
const ownersPerClient = Number(process.env.HISTORY_OWNERS ?? 3);
const faults = (process.env.HISTORY_FAULTS?.split(',').filter(Boolean) ?? ['connection-kill', 'stop', 'kill']) as FaultType[];

it(`seed ${seed}: ${opsPerKind} operations per kind (${families.join(', ')}) with ${faults.join(', ') || 'no faults'} match their models`, async () => {
  const started = Date.now();
  const recorded = process.env.HISTORY_FILE;
  const history = recorded ? (JSON.parse(readFileSync(recorded, 'utf8')) as History) : await runHistory({ seed, opsPerKind, families, faults, nodeClients, ownersPerClient });
  const verdict = checkHistory(history);
  const replay = `npm run test:histories -- --seed ${history.seed} --ops ${history.opsPerKind} --families ${families.join(',')} --faults ${faults.join(',')} --clients ${nodeClients} --owners ${ownersPerClient}`;
  const dir = join(__dirname, '..', '..', '.histories');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `seed-${seed}.json`);
  if (!recorded) writeFileSync(file, JSON.stringify(history));
  console.log(`seed ${seed}: ${Math.round((Date.now() - started) / 1000)} s, ops ${JSON.stringify(verdict.counts)}, faults ${JSON.stringify(verdict.faults)}, history in ${file}`);
  const report = verdict.violations.length > 0 ? formatReport(history, verdict, replay) : '';
  expect(report).toBe('');
  for (const family of families) expect(verdict.counts[family]?.ops ?? 0).toBeGreaterThanOrEqual(opsPerKind);
}, 4 * 60 * 60_000);
