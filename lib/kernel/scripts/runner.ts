import { createHash } from 'node:crypto';
import type { RedisConnection } from '../../connection';
import { AofSyncUnavailableError, ReplicaSyncError } from '../../errors';
import { AofUnavailable } from '../topology/replica-sync';
import type { PublishCommandName, Topology } from '../topology/topology';
import { INCLUDES } from './includes';
import { UnlockLatches } from './unlock-latches';

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

/** No further arguments (see {@link ScriptRunner.runPublishing}). */
export const NO_ARGS: readonly ScriptArg[] = Object.freeze([]);

/**
 * Marks a script call as a write of lock state that replicas must have before it counts (replica
 * sync): after the reply, the runner sends `WAIT <replicas> <timeout>` on the connection that carried
 * the write, when the node has replicas. When none acknowledges, the call is undone (if `undo` is
 * given) and sent again (unless `resend` is false: then only the WAIT is repeated), up to
 * `replicaSync.retries` more rounds; then it rejects with {@link ReplicaSyncError}.
 * Primitive-neutral: the script's wrapper says what its reply means and how it may be repeated.
 */
export interface ReplicatedWrite {
  /**
   * Whether `reply` means the script changed state; only then is `WAIT` sent (a failed acquisition
   * wrote nothing). Without it every reply counts as a change.
   */
  changed?(reply: unknown): boolean;
  /**
   * Takes back what the call did (an acquisition), before it is sent again. Without it the call is
   * re-sent as is, so it must be idempotent: an unlock with the same request id, a renewal. With
   * `resend` false, runs once, when replica sync gives up, before the call rejects.
   */
  undo?(reply: unknown): Promise<unknown>;
  /**
   * Whether a round no replica acknowledged sends the call again. `false` for a write that must run
   * once (a permit release, a count-down: running it twice would count twice) or whose second run
   * could touch what others wrote meanwhile (a force-unlock): the write stays on the primary, in its
   * replication stream, and only the `WAIT` is repeated (it covers every earlier write of the
   * connection); the first reply is returned. @default true
   */
  resend?: boolean;
}

/** Settings of a {@link ScriptRunner}. */
export interface RunnerSettings {
  /** Told of what the runner recovers from (a retried replica sync round, a latch DEL that failed). */
  onError?: (error: unknown, what: string) => void;
}

/**
 * Runs scripts by EVALSHA and falls back to EVAL (which also caches the script on that server) when
 * the server answers NOSCRIPT: after a restart, a failover, or on a cluster node seen for the first
 * time. It also carries what every primitive's scripts share: the topology (the publish command, replica
 * sync) and the deletion of unlock latches. Primitives' typed wrappers are the only code that talks to
 * Redis.
 */
export class ScriptRunner {
  /** Deletes the latches of answered unlock calls, right behind their replies. */
  readonly latches: UnlockLatches;
  /** The connection scripts and reads go to. */
  readonly redis: RedisConnection;
  private readonly onError: (error: unknown, what: string) => void;
  private syncs = 0;

  constructor(
    /** The deployment: its connection, publish command and replica sync. */
    readonly topology: Topology,
    settings: RunnerSettings = {},
  ) {
    this.redis = topology.redis;
    this.onError = settings.onError ?? (() => undefined);
    this.latches = new UnlockLatches(this.redis, topology.slotOf, this.onError);
  }

  /**
   * Runs `script` with the given KEYS and ARGV and resolves its raw reply, or what `read` makes of
   * it (a typed wrapper's decoding: it runs in the step that receives the reply, at no extra promise).
   * The command is written before this returns (ioredis sends at once on a ready connection). With
   * `write`, the reply is returned once replicas have the write (see {@link ReplicatedWrite}); on a
   * node without replicas that costs nothing.
   */
  run(script: Script, keys: readonly string[], args: readonly ScriptArg[], write?: ReplicatedWrite): Promise<unknown>;
  run<R>(
    script: Script,
    keys: readonly string[],
    args: readonly ScriptArg[],
    write: ReplicatedWrite | undefined,
    read: (reply: unknown) => R,
  ): Promise<R>;
  run<R>(
    script: Script,
    keys: readonly string[],
    args: readonly ScriptArg[],
    write?: ReplicatedWrite,
    read?: (reply: unknown) => R,
  ): Promise<unknown> {
    // Asked before sending, so that a reply nobody waits for replicas for is read in its own step
    // (a stale replica count is then read just ahead of this write, on the same connection).
    if (!write || keys.length === 0 || !this.topology.replicas.mayWait(keys[0]!))
      return this.send(script, keys, args, read);
    const synced = this.send(script, keys, args).then(async (reply) => {
      this.syncs += 1;
      try {
        return await this.synced(script, keys, args, write, reply);
      } finally {
        this.syncs -= 1;
      }
    });
    return read ? synced.then(read) : synced;
  }

  /** Whether some write was answered and now waits for its replicas (replica sync under way). */
  get syncing(): boolean {
    return this.syncs > 0;
  }

  /** EVALSHA, then EVAL on NOSCRIPT; resolves the reply, or what `read` makes of it. */
  private send<R>(
    script: Script,
    keys: readonly string[],
    args: readonly ScriptArg[],
    read?: (reply: unknown) => R,
  ): Promise<unknown> {
    return this.redis.call('evalsha', commandOf(script.sha, keys, args)).then(read, (error: unknown) => {
      if (!isNoScript(error)) throw error;
      const sent = this.runText(script, keys, args);
      return read ? sent.then(read) : sent;
    });
  }

  /** Waits for replicas to have the write `reply` answered; undoes and re-sends it while none do. */
  private async synced(
    script: Script,
    keys: readonly string[],
    args: readonly ScriptArg[],
    write: ReplicatedWrite,
    reply: unknown,
  ): Promise<unknown> {
    const { retries, retryDelay, timeout } = this.topology.replicas.settings;
    const key = keys[0]!;
    const resend = write.resend !== false;
    for (let round = 1; ; round++) {
      // A call sent once keeps its first reply; only a re-sent call's reply is judged again.
      if ((round === 1 || resend) && write.changed && !write.changed(reply)) return reply;
      const outcome = await this.topology.replicas.sync(key).catch(async (error: unknown) => {
        if (!(error instanceof AofUnavailable)) throw error;
        // No round can ever succeed: give up now, undone as after the last round.
        if (write.undo) await write.undo(reply);
        throw new AofSyncUnavailableError(script.name, key, error.cause as Error);
      });
      if (!outcome || outcome.synced) return reply;
      const aof = outcome.local === undefined ? undefined : { local: outcome.local, acked: outcome.acked };
      const error = new ReplicaSyncError(script.name, key, outcome.replicas, round, timeout, aof);
      const givingUp = round > retries;
      if ((resend || givingUp) && write.undo) await write.undo(reply);
      if (givingUp) throw error;
      const next = resend ? 'is sent again' : 'waits again';
      this.onError(error, `replica sync of ${script.name}; round ${round + 1} of ${retries + 1} ${next}`);
      await sleep(retryDelay);
      if (resend) reply = await this.send(script, keys, args);
    }
  }

  /**
   * Runs `script` by EVAL, sending its text. For calls made when replies may be lost: a NOSCRIPT
   * answer that never arrives could not trigger the fallback, so the script would never run.
   */
  runText(script: Script, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
    return this.redis.call('eval', commandOf(script.source, keys, args));
  }

  /**
   * Runs a script whose ARGV holds the publish command, once that is known: after `args`, followed by
   * `rest` (a list of variable length). `read`: as for {@link run}.
   */
  runPublishing(
    script: Script,
    keys: readonly string[],
    args: readonly ScriptArg[],
    write?: ReplicatedWrite,
    rest?: readonly ScriptArg[],
  ): Promise<unknown>;
  runPublishing<R>(
    script: Script,
    keys: readonly string[],
    args: readonly ScriptArg[],
    write: ReplicatedWrite | undefined,
    rest: readonly ScriptArg[],
    read: (reply: unknown) => R,
  ): Promise<R>;
  runPublishing<R>(
    script: Script,
    keys: readonly string[],
    args: readonly ScriptArg[],
    write?: ReplicatedWrite,
    rest: readonly ScriptArg[] = NO_ARGS,
    read?: (reply: unknown) => R,
  ): Promise<unknown> {
    const { publish } = this.topology;
    const decode = read as (reply: unknown) => unknown;
    // Once the publish command is known (from the client's first call on), no closure is made for it.
    if (publish.known !== undefined)
      return this.run(script, keys, withPublish(args, publish.known, rest), write, decode);
    return publish.ready.then((command) => this.run(script, keys, withPublish(args, command, rest), write, decode));
  }

  /** Resolves once the latch deletions sent so far are answered (the client is closing). */
  flush(): Promise<void> {
    return this.latches.settled();
  }
}

/*
 * Arrays are built by `push`, not `concat`: optimized code calls out to V8's C++ runtime for
 * `concat`, where `push` stays inline.
 */

/** EVALSHA's or EVAL's arguments: `head` (the SHA or the text), the key count, the keys, ARGV. */
function commandOf(head: string, keys: readonly string[], args: readonly ScriptArg[]): ScriptArg[] {
  const command: ScriptArg[] = [head, keys.length];
  for (let i = 0; i < keys.length; i++) command.push(keys[i]!);
  for (let i = 0; i < args.length; i++) command.push(args[i]!);
  return command;
}

/** `args`, the publish command, then `rest`. */
function withPublish(args: readonly ScriptArg[], command: PublishCommandName, rest: readonly ScriptArg[]): ScriptArg[] {
  const all = args.slice();
  all.push(command);
  for (let i = 0; i < rest.length; i++) all.push(rest[i]!);
  return all;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
