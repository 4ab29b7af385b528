import Redis from 'ioredis';
import { buildPeer } from '../interop/helpers/build-peer';
import { JavaPeer } from '../interop/helpers/peer';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { JavaClient, NodeClient, type Runner } from './clients';
import { plan, type ActorState } from './generators';
import { FAMILIES, nowUs, Rng, type Family, type Fault, type History, type Op } from './history';

/** The faults a run may inject. */
export type FaultType = Fault['type'];

/** What a run does. The same options (seed included) make the same choices. */
export interface RunOptions {
  seed: number;
  /** Operations per family, Java's and Node's together. */
  opsPerKind: number;
  families?: readonly Family[];
  nodeClients?: number;
  ownersPerClient?: number;
  javaThreads?: number;
  faults?: readonly FaultType[];
  /** Pause between two faults, at most, in ms. */
  faultEveryMs?: number;
}

export const NODE_LEASE_MS = 2_000;
export const JAVA_LEASE_MS = 10_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Actor {
  state: ActorState;
  rng: Rng;
  runner: Runner;
  /** The Node process, if any: its label names the client, its generation resets what the actor holds. */
  node?: NodeClient;
  thread: number;
  index: number;
}

/** Runs one randomized mixed-client history on a throwaway Redis and returns what it recorded. */
export async function runHistory(options: RunOptions): Promise<History> {
  const { seed, opsPerKind, families = FAMILIES, nodeClients = 3, ownersPerClient = 3, javaThreads = 2 } = options;
  const faultTypes = options.faults ?? ['connection-kill', 'stop'];
  const rng = new Rng(seed);
  const redis = await startRedis();
  const jar = await buildPeer();
  const peer = await JavaPeer.start(jar, redis.url, JAVA_LEASE_MS);
  const admin = new Redis(redis.url, { maxRetriesPerRequest: null, connectionName: 'h-admin' });
  admin.on('error', () => undefined);
  const nodes = Array.from({ length: nodeClients }, (_, i) => new NodeClient(i + 1, redis.url, NODE_LEASE_MS));
  const java = new JavaClient(peer);
  const ops: Op[] = [];
  const faults: Fault[] = [];
  const budget = new Map(families.map((family) => [family, opsPerKind]));
  let done = false;
  try {
    await Promise.all(nodes.map((node) => node.start()));
    const actors: Actor[] = [];
    // Each actor's choices depend on the seed, its family and its place only: a replay with fewer
    // families, clients or owners keeps the choices of the actors it keeps.
    for (const family of families) {
      const stream = (n: number): Rng => rng.fork(FAMILIES.indexOf(family) * 1_000 + n);
      for (const node of nodes) {
        for (let owner = 1; owner <= ownersPerClient; owner++) {
          actors.push({ state: newState(family, false), rng: stream(node.index * 10 + owner), runner: node, node, thread: owner, index: owner });
        }
      }
      for (let t = 0; t < javaThreads; t++) {
        const thread = java.newThread();
        actors.push({ state: newState(family, true), rng: stream(900 + t), runner: java, thread, index: thread });
      }
    }
    const record = (actor: Actor, f: string, mode: Op['mode'], args: Op['args']): Op => {
      const client = actor.node?.label ?? 'java';
      const op: Op = {
        id: ops.length,
        family: actor.state.family,
        name: `h:${actor.state.family}`,
        client,
        owner: `${client}/${actor.index}`,
        f,
        mode,
        args,
        invoke: nowUs(),
        complete: 0,
        outcome: 'unknown',
      };
      ops.push(op);
      return op;
    };
    const loop = async (actor: Actor): Promise<void> => {
      let generation = actor.node?.generation ?? 0;
      const { state } = actor;
      while ((budget.get(state.family) ?? 0) > 0) {
        const next = plan(state, actor.rng);
        await sleep(next.pauseMs);
        if (actor.node) {
          await actor.node.whenReady();
          if (actor.node.generation !== generation) {
            generation = actor.node.generation;
            state.held = []; // its handles died with the process
            continue;
          }
        }
        budget.set(state.family, (budget.get(state.family) ?? 0) - 1);
        await perform(actor, record(actor, next.f, next.mode, next.args));
      }
      // Give back what is still held, so the run ends clean; these are recorded too.
      while (state.held.length > 0 && (!actor.node || actor.node.generation === generation)) {
        const top = state.held.at(-1)!;
        await perform(actor, record(actor, 'release', top.mode, { of: top.of, permitId: top.permitId }));
      }
    };
    const perform = async (actor: Actor, op: Op): Promise<void> => {
      await actor.runner.perform(op, actor.thread);
      const { state } = actor;
      if (op.f === 'acquire' && op.outcome === 'ok' && op.value !== false) {
        state.held.push({ of: op.id, mode: op.mode, permitId: typeof op.value === 'string' ? op.value : undefined });
      } else if (op.f === 'release') {
        state.held = state.held.filter((held) => held.of !== op.args.of);
      } else if (op.f === 'drainPermits' && op.outcome === 'ok') {
        state.owed += Math.max(0, Number(op.value));
      } else if (op.f === 'addPermits' && op.args.repays && op.outcome === 'ok') {
        state.owed = 0;
      }
    };
    const injecting = injectFaults(faultTypes, rng.fork(1_000_000), options.faultEveryMs ?? 2_500, { nodes, admin, redis, faults }, () => done);
    await Promise.all(actors.map(loop));
    done = true;
    await injecting;
  } finally {
    done = true;
    await Promise.all(nodes.map((node) => node.stop()));
    await peer.stop();
    admin.disconnect();
    await redis.stop();
  }
  return { seed, opsPerKind, ops, faults, nodeLeaseMs: NODE_LEASE_MS, javaLeaseMs: JAVA_LEASE_MS };
}

function newState(family: Family, java: boolean): ActorState {
  return { family, java, held: [], owed: 0 };
}

interface FaultTargets {
  nodes: NodeClient[];
  admin: Redis;
  redis: TestRedis;
  faults: Fault[];
}

/** One fault at a time, every up to `everyMs`, until `finished()`. */
async function injectFaults(types: readonly FaultType[], rng: Rng, everyMs: number, targets: FaultTargets, finished: () => boolean): Promise<void> {
  if (types.length === 0) return;
  const { nodes, admin, redis, faults } = targets;
  while (!finished()) {
    await sleep(rng.int(everyMs / 5, everyMs));
    if (finished()) return;
    const type = rng.pick(types);
    const node = rng.pick(nodes);
    const start = nowUs();
    switch (type) {
      case 'connection-kill': {
        const killed = await killConnection(admin, rng, nodes);
        if (killed) faults.push({ type, client: killed, start, end: nowUs() });
        break;
      }
      case 'stop': {
        const client = node.label;
        node.signal('SIGSTOP');
        await sleep(rng.int(100, 3_500));
        node.signal('SIGCONT');
        faults.push({ type, client, start, end: nowUs() });
        break;
      }
      case 'kill': {
        const client = node.label;
        await node.crashAndRestart();
        faults.push({ type, client, start, end: nowUs() });
        break;
      }
      case 'redis-restart':
        await redis.restart();
        faults.push({ type, start, end: nowUs() });
        break;
    }
  }
}

/** Kills one connection of a Node client or of the Java peer (CLIENT KILL ID); resolves whose, or nothing. */
async function killConnection(admin: Redis, rng: Rng, nodes: readonly NodeClient[]): Promise<string | undefined> {
  let list: string;
  try {
    list = (await admin.call('CLIENT', 'LIST', 'TYPE', rng.chance(0.3) ? 'pubsub' : 'normal')) as string;
  } catch {
    return undefined;
  }
  const candidates = list
    .split('\n')
    .filter(Boolean)
    .map((line) => ({ id: /\bid=(\d+)/.exec(line)?.[1], name: /\bname=(\S*)/.exec(line)?.[1] ?? '' }))
    .filter((c) => c.id !== undefined && c.name !== 'h-admin');
  if (candidates.length === 0) return undefined;
  const victim = rng.pick(candidates);
  await admin.call('CLIENT', 'KILL', 'ID', victim.id!).catch(() => undefined);
  const node = nodes.find((n) => n.connectionName === victim.name);
  return node ? node.label : victim.name === '' ? 'java' : victim.name;
}
