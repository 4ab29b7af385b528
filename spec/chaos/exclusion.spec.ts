import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkExclusion, type ExclusionReport, type SectionEvent } from '../helpers/exclusion';
import { useRedis } from '../helpers/fixture';

const { admin, server } = useRedis();
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ioredisson-exclusion-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `processes` contenders of `mode` and checks their logs and the counter. */
async function run(mode: 'ioredisson' | 'broken', processes: number, iterations: number, kill?: number): Promise<ExclusionReport> {
  const logFile = join(dir, 'sections.jsonl');
  const children = Array.from({ length: processes }, () =>
    spawn(process.execPath, [join(__dirname, 'fixtures', 'contender.mjs'), server().url, String(iterations), logFile, mode], {
      stdio: ['ignore', 'inherit', 'inherit'],
    }),
  );
  const exited = Promise.all(children.map((child) => once(child, 'exit')));
  if (kill !== undefined) {
    // Kill the victim once it is well into the run, most likely while it holds the lock.
    const victim = `pid-${children[kill]!.pid}`;
    while (readEvents(logFile).filter((e) => e.worker === victim && e.kind === 'enter').length < 20) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    children[kill]!.kill('SIGKILL');
  }
  await exited;
  const events = readEvents(logFile);
  return checkExclusion(events, Number(await admin().get('checked:counter')));
}

function readEvents(logFile: string): SectionEvent[] {
  let text = '';
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter((line) => line.endsWith('}')).map((line) => JSON.parse(line) as SectionEvent);
}

describe('mutual-exclusion checker', () => {
  it('catches a deliberately broken lock', async () => {
    const report = await run('broken', 4, 100);
    expect(report.sections).toBe(400);
    expect(report.overlaps).toBeGreaterThan(0);
    expect(report.lostUpdates).toBeGreaterThan(0);
  });

  it('finds no overlap and no lost update with ioredisson: 4 processes x 150 sections', async () => {
    const report = await run('ioredisson', 4, 150);
    expect(report).toEqual({ sections: 600, overlaps: 0, lostUpdates: 0 });
  });

  it('finds no overlap when a contender is killed mid-run, and the others still finish', async () => {
    const report = await run('ioredisson', 3, 150, 0);
    expect(report.overlaps).toBe(0);
    // A killed worker may die between its write and its logged exit: at most one update unaccounted for.
    expect(report.lostUpdates).toBeLessThanOrEqual(0);
    expect(report.lostUpdates).toBeGreaterThanOrEqual(-1);
    expect(report.sections).toBeGreaterThanOrEqual(300 + 19);
  });
});
