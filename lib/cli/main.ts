#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Redis, type RedisOptions } from 'ioredis';
import { version } from '../../package.json';
import { forceUnlock } from './force-unlock';
import { CliError, EXIT, inspect, list, type InspectOptions } from './inspect';
import { renderForceUnlock, renderList, renderReport, renderWaits } from './render';
import { waits } from './waits';

const USAGE = `Usage: ioredisson <command> [options]

Shows and repairs what Redisson's lock family (Java Redisson or ioredisson) keeps in Redis.

Commands:
  inspect <name>        what <name> holds: the kind, owners with hold counts, TTLs, queue, permits,
                        a group multi-lock's value fields with their owners
  list [pattern]        every lock, semaphore and latch whose name matches (SCAN, default *)
  watch <name>          inspect <name> again every --interval ms until interrupted
  force-unlock <name>   delete a lock (a group multi-lock: every value) whoever holds it and wake
                        its waiters (needs --yes)
  waits                 the waits clients with deadlockDetection recorded, who holds what they
                        wait for, and the deadlock cycles among them

Options:
  --url <url>           Redis to connect to (default: $REDIS_URL, else redis://127.0.0.1:6379);
                        rediss://[user:password@]host:port for TLS
  --ca <file>           TLS: the PEM certificate(s) to trust for the server (default: Node's CA store)
  --json                print JSON (watch: one JSON document per line)
  --as <kind>           read a string counter as "semaphore" or "latch" (stored alike by Redisson)
  --interval <ms>       watch: refresh period (default 1000)
  --times <n>           watch: stop after n refreshes
  --yes                 force-unlock: confirm
  -h, --help            this text
  -v, --version         the version of ioredisson

Names are the raw names in Redis: if your Redisson config has a NameMapper, pass the mapped name.
Exit codes: 0 ok, 1 nothing under the name, 2 bad usage, 3 not a Redisson object,
            4 Redis unreachable or failing, 5 force-unlock refused.`;

interface Parsed {
  command: string;
  arg: string | undefined;
  url: string;
  /** The contents of `--ca`. */
  ca: Buffer | undefined;
  json: boolean;
  as: InspectOptions['as'];
  interval: number;
  times: number | undefined;
}

function parse(argv: string[]): Parsed | 'help' | 'version' {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        ca: { type: 'string' },
        json: { type: 'boolean', default: false },
        as: { type: 'string' },
        interval: { type: 'string', default: '1000' },
        times: { type: 'string' },
        yes: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
        version: { type: 'boolean', short: 'v', default: false },
      },
    });
  } catch (error) {
    throw new CliError((error as Error).message, EXIT.USAGE, 'ioredisson --help lists the options');
  }
  const { values, positionals } = parsed;
  if (values.help || positionals[0] === 'help') return 'help';
  if (values.version) return 'version';
  if (positionals.length === 0) throw new CliError('no command given', EXIT.USAGE, 'ioredisson --help lists the commands');
  const [command, arg, ...rest] = positionals;
  if (!['inspect', 'list', 'watch', 'force-unlock', 'waits'].includes(command!)) {
    throw new CliError(`unknown command '${command}'`, EXIT.USAGE, 'commands: inspect, list, watch, force-unlock, waits');
  }
  if (command === 'waits' && arg !== undefined) throw new CliError(`waits takes no name, got '${arg}'`, EXIT.USAGE, 'ioredisson waits');
  if (command !== 'list' && command !== 'waits' && (arg === undefined || arg === '')) throw new CliError(`${command} needs a name`, EXIT.USAGE, `ioredisson ${command} <name>`);
  if (rest.length > 0) throw new CliError(`unexpected argument '${rest[0]}'`, EXIT.USAGE, 'quote a name that contains spaces');
  if (values.as !== undefined && values.as !== 'semaphore' && values.as !== 'latch') {
    throw new CliError(`--as must be semaphore or latch, not '${values.as}'`, EXIT.USAGE);
  }
  const interval = Number(values.interval);
  if (!Number.isInteger(interval) || interval < 50) throw new CliError('--interval must be an integer of at least 50 (ms)', EXIT.USAGE);
  const times = values.times === undefined ? undefined : Number(values.times);
  if (times !== undefined && (!Number.isInteger(times) || times < 1)) throw new CliError('--times must be a positive integer', EXIT.USAGE);
  // Refused before connecting: a force-unlock is never half-begun.
  if (command === 'force-unlock' && values.yes !== true) {
    throw new CliError(
      `not force-unlocking '${arg}' without --yes: its holders would go on believing they hold it`,
      EXIT.REFUSED,
      `ioredisson inspect '${arg}' shows them; ioredisson force-unlock '${arg}' --yes`,
    );
  }
  return {
    command: command!,
    arg,
    url: values.url ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    ca: values.ca === undefined ? undefined : readCa(values.ca),
    json: values.json === true,
    as: values.as,
    interval,
    times,
  };
}

/** The PEM file `--ca` names. */
function readCa(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new CliError(`cannot read --ca ${path}: ${(error as Error).message}`, EXIT.USAGE);
  }
}

/** The URL without its password, for messages. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

async function connect(url: string, ca: Buffer | undefined): Promise<Redis> {
  const options: RedisOptions = { lazyConnect: true, connectTimeout: 5_000, maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: () => null };
  if (ca) {
    if (!url.startsWith('rediss://')) throw new CliError('--ca needs a rediss:// URL (TLS)', EXIT.USAGE);
    options.tls = { ca };
  }
  let redis: Redis;
  try {
    redis = new Redis(url, options);
  } catch (error) {
    throw new CliError(`invalid --url ${redact(url)}: ${(error as Error).message}`, EXIT.USAGE);
  }
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => {
    lastError = error;
  });
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    const reason = (lastError ?? (error as Error)).message;
    throw new CliError(`cannot reach Redis at ${redact(url)}: ${reason}`, EXIT.REDIS, 'is redis-server running there? pass --url or set REDIS_URL');
  }
  return redis;
}

const print = (text: string): void => {
  process.stdout.write(`${text}\n`);
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function execute(options: Parsed, redis: Redis): Promise<number> {
  const name = options.arg!;
  switch (options.command) {
    case 'inspect': {
      const report = await inspect(redis, name, { as: options.as });
      print(options.json ? JSON.stringify(report, null, 2) : renderReport(report));
      return EXIT.OK;
    }
    case 'list': {
      const rows = await list(redis, options.arg ?? '*', { as: options.as });
      print(options.json ? JSON.stringify(rows, null, 2) : renderList(rows));
      return EXIT.OK;
    }
    case 'watch': {
      let stop = false;
      const onSignal = (): void => {
        stop = true;
      };
      process.once('SIGINT', onSignal);
      const tty = process.stdout.isTTY && !options.json;
      for (let n = 0; !stop && (options.times === undefined || n < options.times); n++) {
        if (n > 0) await sleep(options.interval);
        if (stop) break;
        const at = new Date().toISOString();
        let text: string;
        try {
          const report = await inspect(redis, name, { as: options.as });
          text = options.json ? JSON.stringify({ at, report }) : `${at}\n${renderReport(report)}`;
        } catch (error) {
          if (!(error instanceof CliError) || error.exitCode !== EXIT.NOT_FOUND) throw error;
          text = options.json ? JSON.stringify({ at, report: null }) : `${at}\n${name}: nothing stored (free)`;
        }
        if (tty) process.stdout.write('\x1b[2J\x1b[H');
        print(text);
      }
      process.off('SIGINT', onSignal);
      return EXIT.OK;
    }
    case 'waits': {
      const report = await waits(redis);
      print(options.json ? JSON.stringify(report, null, 2) : renderWaits(report));
      return EXIT.OK;
    }
    case 'force-unlock': {
      const result = await forceUnlock(redis, name);
      print(options.json ? JSON.stringify(result, null, 2) : renderForceUnlock(result));
      return EXIT.OK;
    }
  }
  return EXIT.USAGE;
}

/** Runs the command line `argv` (without node and the script); resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  let redis: Redis | undefined;
  let json = argv.includes('--json');
  try {
    const options = parse(argv);
    if (options === 'help') {
      print(USAGE);
      return EXIT.OK;
    }
    if (options === 'version') {
      print(version);
      return EXIT.OK;
    }
    json = options.json;
    redis = await connect(options.url, options.ca);
    return await execute(options, redis);
  } catch (error) {
    const failure =
      error instanceof CliError
        ? error
        : new CliError(`Redis error: ${(error as Error).message}`, EXIT.REDIS);
    if (json) process.stderr.write(`${JSON.stringify({ error: failure.message, hint: failure.hint, exitCode: failure.exitCode })}\n`);
    else process.stderr.write(`ioredisson: ${failure.message}${failure.hint ? `\n  ${failure.hint}` : ''}\n`);
    return failure.exitCode;
  } finally {
    redis?.disconnect();
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`ioredisson: ${String(error)}\n`);
      process.exitCode = EXIT.REDIS;
    },
  );
}
