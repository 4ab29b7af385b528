import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { onPath } from './on-path';

/**
 * Where the helpers' servers come from (after `REDIS_URL`, which `startRedis` honours first): a local
 * binary, or else a container of `image` started through testcontainers.
 */
export type ServerSource =
  { readonly kind: 'binary'; readonly path: string } | { readonly kind: 'container'; readonly image: string };

/** The image containers run when no local binary is found: `IOREDISSON_SERVER_IMAGE`, else this. */
const DEFAULT_IMAGE = 'redis:7.0';

/**
 * The local server binary: `IOREDISSON_SERVER_BIN` when set (a path, e.g. a Redis 6.2 `redis-server`
 * or a `valkey-server`), else `redis-server` when it is on `PATH`. Without one (or with
 * `IOREDISSON_SERVER_BIN=none`), a container of `IOREDISSON_SERVER_IMAGE` (default `redis:7.0`),
 * which needs a Docker engine.
 */
export function serverSource(): ServerSource {
  const bin = process.env.IOREDISSON_SERVER_BIN;
  if (bin && bin !== 'none') return { kind: 'binary', path: bin };
  if (bin !== 'none' && onPath('redis-server')) return { kind: 'binary', path: 'redis-server' };
  return { kind: 'container', image: process.env.IOREDISSON_SERVER_IMAGE || DEFAULT_IMAGE };
}

/**
 * The command-line client that creates clusters: `IOREDISSON_CLI_BIN` when set, else the `*-cli` next
 * to `IOREDISSON_SERVER_BIN` (`valkey-cli` beside `valkey-server`) when there is one, else `redis-cli`.
 */
export function cliBinary(): string {
  if (process.env.IOREDISSON_CLI_BIN) return process.env.IOREDISSON_CLI_BIN;
  const server = process.env.IOREDISSON_SERVER_BIN;
  if (server && server !== 'none') {
    const sibling = join(dirname(server), basename(server).replace(/server$/, 'cli'));
    if (sibling !== server && existsSync(sibling)) return sibling;
  }
  return 'redis-cli';
}

/** What {@link serverVersion} found. */
export interface ServerVersion {
  /** `redis` or `valkey`. */
  readonly name: string;
  readonly major: number;
  readonly minor: number;
  /** As printed, e.g. `6.2.14`. */
  readonly version: string;
}

let version: ServerVersion | undefined;

/**
 * The server's product and version, from `<binary> --version`, or for a container from the same run
 * in a throwaway container of its image (with the `docker` command); read once per process.
 */
export function serverVersion(): ServerVersion {
  if (!version) {
    const source = serverSource();
    const text =
      source.kind === 'binary'
        ? execFileSync(source.path, ['--version'], { encoding: 'utf8' })
        : execFileSync(
            'docker',
            ['run', '--rm', '--network', 'none', '--entrypoint', 'redis-server', source.image, '--version'],
            {
              encoding: 'utf8',
            },
          );
    const found = /^(\w+) server v=(\d+)\.(\d+)\.\S*/i.exec(text.trim());
    if (!found) throw new Error(`cannot tell the server's version from: ${text}`);
    version = {
      name: found[1]!.toLowerCase(),
      major: Number(found[2]),
      minor: Number(found[3]),
      version: found[0].slice(found[0].indexOf('v=') + 2),
    };
  }
  return version;
}

/** Whether the server has 7.0's options (`--enable-debug-command`, `--cluster-port`): Redis 7+ and every Valkey. */
export function hasRedis7Options(): boolean {
  const { name, major } = serverVersion();
  return name !== 'redis' || major >= 7;
}

/** `--enable-debug-command local` where the option exists; Redis 6.2 allows DEBUG without it. */
export function debugCommandArgs(): string[] {
  return hasRedis7Options() ? ['--enable-debug-command', 'local'] : [];
}

/** Whether the server has `WAITAOF`: Redis 7.2+ and every Valkey. */
export function hasWaitAof(): boolean {
  const { name, major, minor } = serverVersion();
  return name !== 'redis' || major > 7 || (major === 7 && minor >= 2);
}

/** An append-only file (Redis 6.2) or folder (7.0+) named after `port`, for servers sharing a `--dir`. */
export function aofFileArgs(port: number): string[] {
  return hasRedis7Options() ? ['--appenddirname', `aof-${port}`] : ['--appendfilename', `aof-${port}.aof`];
}
