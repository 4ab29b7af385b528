import { createHash } from 'node:crypto';
import type { RedisConnection } from '../connection';
import { INCLUDES } from './includes';
import { LatchReaper } from './latch-reaper';
import { PublishCommand, type PublishCommandName } from './publish';

/** A Lua script with its SHA-1, ready for EVALSHA. */
export interface Script {
  /** Name for diagnostics, e.g. `lock/acquire`. */
  readonly name: string;
  /** The script text. */
  readonly source: string;
  /** SHA-1 of `source`, the EVALSHA handle. */
  readonly sha: string;
}

/** Wraps a script's text, its `--- @include "<name>"` lines replaced (see `INCLUDES`), with its SHA-1. */
export function defineScript(name: string, text: string): Script {
  const source = text.replace(/^--- @include "([\w-]+)"$/gm, (_line, include: string) => {
    const included = INCLUDES[include];
    if (included === undefined) throw new Error(`Script ${name} includes unknown Lua "${include}"`);
    return included.trimEnd();
  });
  return { name, source, sha: createHash('sha1').update(source).digest('hex') };
}

/** An argument as Redis receives it; a `Buffer` goes as raw bytes (binary ids). */
export type ScriptArg = string | number | Buffer;

/**
 * Runs scripts by EVALSHA and falls back to EVAL (which also caches the script on that server) when
 * the server answers NOSCRIPT: after a restart, a failover, or on a cluster node seen for the first
 * time. It also carries what every primitive's scripts share: the publish command and the reaper of
 * unlock latches. Primitives' typed wrappers (in this folder) are the only code that talks to Redis.
 */
export class ScriptRunner {
  /** Deletes the latches of answered unlock calls, in batches. */
  readonly latches: LatchReaper;
  /** PUBLISH or SPUBLISH, passed to every script that publishes. */
  readonly publish: PublishCommand;

  constructor(
    /** The connection scripts and reads go to. */
    readonly redis: RedisConnection,
    publish: Promise<PublishCommandName>,
  ) {
    this.latches = new LatchReaper(redis);
    this.publish = new PublishCommand(publish);
  }

  /**
   * Runs `script` with the given KEYS and ARGV and returns its raw reply (decode it with `reply.ts`).
   * The command is written before this returns (ioredis sends at once on a ready connection).
   */
  run(script: Script, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
    return this.redis.evalsha(script.sha, keys.length, ...keys, ...args).catch((error: unknown) => {
      if (!isNoScript(error)) throw error;
      return this.runText(script, keys, args);
    });
  }

  /**
   * Runs `script` by EVAL, sending its text. For calls made when replies may be lost: a NOSCRIPT
   * answer that never arrives could not trigger the fallback, so the script would never run.
   */
  runText(script: Script, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
    return this.redis.eval(script.source, keys.length, ...keys, ...args);
  }

  /** Runs a script whose last ARGV is the publish command, once that is known. */
  runPublishing(script: Script, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
    return this.publish.with((command) => this.run(script, keys, [...args, command]));
  }

  /** Deletes the latches still queued (the client is closing). */
  flush(): Promise<void> {
    return this.latches.flush();
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
