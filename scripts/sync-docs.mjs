// Copies generated figures into the documents that quote them, between marker comments:
//   <!-- generated: <source> --> ... <!-- end generated -->
// Sources: bench/README-section.md (written by a full `npm run bench`) and the scaling run's
// bench/results/scaling/latest.md into docs/benchmarks.md, and
// docs/generated/test-suites.json (written by the Jest reporter spec/helpers/suite-recorder.js) into
// README.md. `--check` changes nothing and exits 1 when a document is out of date.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const read = (path) => readFileSync(join(ROOT, path), 'utf8');

/** The suites `npm run test:all` runs, in its order, with what each covers. */
const SUITES = [
  [
    'main',
    '`npm test`',
    "every kind's contract and own tests, TLS and ACL, the CLI, and the interop tests against Java Redisson",
  ],
  ['chaos', '`npm run test:chaos`', 'fault injection and soak'],
  [
    'topology',
    '`npm run test:topology`',
    'Cluster with replicas and Sentinel: contracts, replica sync, failover and slot moves',
  ],
  [
    'packaging',
    '`npm run test:packaging`',
    "the packed tarball from CommonJS, ESM and TypeScript consumers, the documents' snippets, the demo and the examples",
  ],
  [
    'histories',
    '`npm run test:histories`',
    "the randomized mixed-client history check: Node processes and Java Redisson, 2,000 random operations per kind under faults, checked against each kind's model ([docs/history-checker.md](https://github.com/ioredisson/ioredisson/blob/main/docs/history-checker.md); `-- --seed S --ops N` runs longer)",
  ],
];

function suitesTable() {
  let recorded;
  try {
    recorded = JSON.parse(read('docs/generated/test-suites.json'));
  } catch {
    return 'No run recorded yet: `IOREDISSON_RECORD_SUITES=1 npm run test:all` records one.';
  }
  const rows = SUITES.filter(([key]) => recorded[key]).map(([key, command, what]) => {
    const { tests, seconds } = recorded[key];
    return `| ${command} | ${what} | ${tests} | ${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s |`;
  });
  const runs = SUITES.map(([key]) => recorded[key]).filter(Boolean);
  const commits = [...new Set(runs.map((run) => run.commit))].join(', ');
  const last = runs
    .map((run) => run.at)
    .sort()
    .at(-1);
  return [
    '| command | what | tests | took |',
    '|---|---|---|---|',
    ...rows,
    '',
    `Recorded at ${commits} (last ${last}) on a ${runs[0].cores}-core machine shared with other work; a quiet one takes less.`,
  ].join('\n');
}

function benchSection() {
  // The section is written for the README: drop its title, make its links relative to docs/.
  return read('bench/README-section.md')
    .replace(/^## Benchmarks\n+/, '')
    .replaceAll('https://github.com/ioredisson/ioredisson/blob/main/bench/', '../bench/')
    .trim();
}

/** The committed scaling run's machine line and its "Scaling curves" section, headings one level down. */
function scalingSection() {
  const results = read('bench/results/scaling/latest.md');
  const start = results.indexOf('## Scaling curves\n');
  const end = results.indexOf('\n## ', start + 1);
  const curves = results
    .slice(start, end)
    .replace(/^## Scaling curves\n+/, '')
    .replaceAll(/^### /gm, '#### ');
  return `${results.split('\n')[2]}\n\n${curves.trim()}`;
}

const TARGETS = [
  ['README.md', 'docs/generated/test-suites.json', suitesTable],
  ['docs/benchmarks.md', 'bench/README-section.md', benchSection],
  ['docs/benchmarks.md', 'bench/results/scaling/latest.md', scalingSection],
];

const check = process.argv.includes('--check');
let stale = 0;
for (const [document, source, render] of TARGETS) {
  const text = read(document);
  const marker = `<!-- generated: ${source} -->\n`;
  const start = text.indexOf(marker);
  const end = text.indexOf('\n<!-- end generated -->', start);
  if (start < 0 || end < 0) throw new Error(`${document} has no block for ${source}`);
  const updated = text.slice(0, start + marker.length) + render() + text.slice(end);
  if (updated === text) continue;
  stale += 1;
  if (check) console.error(`${document} is out of date with ${source}: run npm run docs:sync`);
  else writeFileSync(join(ROOT, document), updated);
}
process.exitCode = check && stale > 0 ? 1 : 0;
