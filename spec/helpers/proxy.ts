import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** Which way data flows: `up` from the client to Redis, `down` from Redis to the client. */
export type Direction = 'up' | 'down';

/** Faults applied to one direction of every connection (or of one connection). */
export interface Faults {
  /** Delay before each chunk is forwarded, in ms. */
  latencyMs?: number;
  /** Discard the data silently (replies lost, or commands never delivered). */
  drop?: boolean;
  /** Forward in pieces of at most this many bytes, one per event-loop turn. */
  fragmentBytes?: number;
  /** Hold the data back until this settles, then forward it in order. */
  until?: Promise<unknown>;
  /** Told of each chunk as it arrives, whatever happens to it then. */
  tap?: (chunk: Buffer) => void;
}

interface Link {
  readonly index: number;
  readonly client: Socket;
  readonly server: Socket;
  readonly faults: Record<Direction, Faults | undefined>;
}

/**
 * A TCP proxy between the client and Redis that injects faults on command: latency, dropped data
 * (lost replies, black holes), held data, connection resets and fragmented writes, per direction, for all
 * connections or for one. Connections are numbered in the order they were accepted, from 0.
 */
export class ChaosProxy {
  private readonly links: Link[] = [];
  private defaults: Record<Direction, Faults | undefined> = { up: undefined, down: undefined };

  private constructor(
    private readonly server: Server,
    /** The port clients connect to. */
    readonly port: number,
    private readonly targetPort: number,
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  /** Starts a proxy on a free loopback port forwarding to `127.0.0.1:targetPort`. */
  static async start(targetPort: number): Promise<ChaosProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    return new ChaosProxy(server, port, targetPort);
  }

  /** `redis://` URL of the proxy. */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Number of connections accepted so far. */
  get accepted(): number {
    return this.links.length;
  }

  /** Sets the faults of `direction` for current and future connections, or for connection `index` only. */
  set(direction: Direction, faults: Faults | undefined, index?: number): void {
    if (index === undefined) {
      this.defaults = { ...this.defaults, [direction]: faults };
      for (const link of this.links) link.faults[direction] = faults;
    } else {
      const link = this.links[index];
      if (!link) throw new Error(`No proxied connection #${index}`);
      link.faults[direction] = faults;
    }
  }

  /** Removes every fault. */
  heal(): void {
    this.set('up', undefined);
    this.set('down', undefined);
  }

  /** Resets (TCP RST) every open connection, or connection `index` only. */
  reset(index?: number): void {
    for (const link of index === undefined ? this.links : [this.links[index]!]) {
      link.client.resetAndDestroy();
      link.server.destroy();
    }
  }

  /** Resets every connection and stops accepting new ones. */
  async close(): Promise<void> {
    this.reset();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(client: Socket): void {
    const server = createConnection({ host: '127.0.0.1', port: this.targetPort });
    const link: Link = { index: this.links.length, client, server, faults: { ...this.defaults } };
    this.links.push(link);
    this.pipe(client, server, () => link.faults.up);
    this.pipe(server, client, () => link.faults.down);
    const close = (): void => {
      client.destroy();
      server.destroy();
    };
    client.on('error', close).on('close', close);
    server.on('error', close).on('close', close);
  }

  /** Forwards `from` to `to` in order, applying the faults in force when each chunk arrives. */
  private pipe(from: Socket, to: Socket, faults: () => Faults | undefined): void {
    let queue = Promise.resolve();
    from.on('data', (chunk: Buffer) => {
      const current = faults();
      current?.tap?.(chunk);
      if (current?.drop) return;
      queue = queue.then(async () => {
        await current?.until;
        if (current?.latencyMs) await sleep(current.latencyMs);
        const size = current?.fragmentBytes ?? chunk.length;
        for (let offset = 0; offset < chunk.length; offset += size) {
          if (to.destroyed) return;
          to.write(chunk.subarray(offset, offset + size));
          if (size < chunk.length) await new Promise((resolve) => setImmediate(resolve));
        }
      });
    });
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
