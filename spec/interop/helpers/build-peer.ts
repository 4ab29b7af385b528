import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The Maven project of the Java peer. */
export const PEER_PROJECT = join(__dirname, '..', 'redisson-peer');
/** The self-contained jar it builds. */
export const PEER_JAR = join(PEER_PROJECT, 'target', 'redisson-peer.jar');
/** Longest build: the first one downloads Redisson and Maven's plugins from Central. */
export const BUILD_TIMEOUT = 15 * 60_000;

const LOCK_DIR = join(PEER_PROJECT, '.build.lock');

/**
 * Builds the peer jar unless it is newer than every source, and resolves its path. Test files run in
 * parallel workers, so one build at a time holds a lock directory; the others wait for it. Tries
 * offline first (the local repository usually has everything), then online. Rejects with Maven's
 * output when both fail.
 */
export async function buildPeer(): Promise<string> {
  if (isFresh()) return PEER_JAR;
  await withLock(async () => {
    if (isFresh()) return;
    try {
      await mvn(['-o']);
    } catch {
      await mvn([]);
    }
  });
  if (!isFresh()) throw new Error(`Maven finished but ${PEER_JAR} is missing or older than its sources`);
  return PEER_JAR;
}

function isFresh(): boolean {
  if (!existsSync(PEER_JAR)) return false;
  const built = statSync(PEER_JAR).mtimeMs;
  return newestSource(PEER_PROJECT, ['pom.xml', 'src']) < built;
}

function newestSource(dir: string, entries: readonly string[]): number {
  let newest = 0;
  for (const entry of entries) {
    const path = join(dir, entry);
    const stat = statSync(path);
    const mtime = stat.isDirectory() ? newestSource(path, readdirSync(path)) : stat.mtimeMs;
    newest = Math.max(newest, mtime);
  }
  return newest;
}

function mvn(extra: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('mvn', ['-B', '-q', '-Dstyle.color=never', ...extra, '-f', join(PEER_PROJECT, 'pom.xml'), 'package'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-20_000);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', (error) => reject(new Error(`could not run mvn: ${error.message}`)));
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`mvn ${extra.join(' ')} package failed (exit ${code}) in ${PEER_PROJECT}:\n${output}`));
    });
  });
}

/** Runs `fn` holding the build lock; a lock left by a dead process is taken over. */
async function withLock(fn: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + BUILD_TIMEOUT;
  while (!tryLock()) {
    if (Date.now() > deadline) throw new Error(`peer build lock ${LOCK_DIR} still held after ${BUILD_TIMEOUT} ms`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  try {
    await fn();
  } finally {
    rmSync(LOCK_DIR, { recursive: true, force: true });
  }
}

function tryLock(): boolean {
  try {
    mkdirSync(LOCK_DIR);
    writeFileSync(join(LOCK_DIR, 'pid'), String(process.pid));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (isStale()) rmSync(LOCK_DIR, { recursive: true, force: true });
    return false;
  }
}

/** A lock whose owner died, or that has had no owner pid for a minute. */
function isStale(): boolean {
  let pid = NaN;
  try {
    pid = Number(readFileSync(join(LOCK_DIR, 'pid'), 'utf8'));
  } catch {
    // not written yet, or the lock was just released
  }
  if (!Number.isInteger(pid) || pid <= 0) {
    try {
      return Date.now() - statSync(LOCK_DIR).mtimeMs > 60_000;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
