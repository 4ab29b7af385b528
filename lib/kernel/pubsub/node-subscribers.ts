import type { Cluster, Redis } from 'ioredis';

/** How long after a slot map refresh or a lost node the primaries are looked at again, in ms. */
const SYNC_SETTLE_MS = 200;

/** What {@link NodeSubscribers} reports to its owner. */
export interface NodeSubscriberEvents {
  /** A message on a channel, from any primary. */
  onMessage(channel: string, message: string): void;
  /** Told of an error recovered from. */
  onError(error: unknown, what: string): void;
}

/**
 * One subscriber connection per primary of a Cluster, each subscribed to the same classic channels:
 * for what every node publishes on its own, such as keyspace notifications (Redisson subscribes
 * them on every primary too). Follows the primaries as the client's slot map changes: connects to
 * new ones (subscribing every channel there) and closes those no longer serving slots. The
 * connections' sockets are unreferenced: they never keep the process alive.
 */
export class NodeSubscribers {
  private readonly connections = new Map<string, Redis>();
  private readonly channels = new Set<string>();
  private closed = false;
  private pending: NodeJS.Timeout | undefined;
  private readonly onTopologyChange = (): void => {
    this.pending ??= setTimeout(() => {
      this.pending = undefined;
      this.sync();
    }, SYNC_SETTLE_MS).unref();
  };

  constructor(
    private readonly cluster: Cluster,
    private readonly events: NodeSubscriberEvents,
  ) {
    cluster.on('refresh', this.onTopologyChange);
    cluster.on('-node', this.onTopologyChange);
  }

  /** SUBSCRIBEs `channel` on every primary (once the client's connection knows them); resolves once each answered. */
  async subscribe(channel: string): Promise<void> {
    this.channels.add(channel);
    if (this.cluster.status !== 'ready') await new Promise((resolve) => this.cluster.once('ready', resolve));
    this.sync();
    await Promise.all([...this.connections.values()].map((connection) => connection.subscribe(channel)));
  }

  /** UNSUBSCRIBEs `channel` on every primary. */
  async unsubscribe(channel: string): Promise<void> {
    this.channels.delete(channel);
    await Promise.all([...this.connections.values()].map((connection) => connection.unsubscribe(channel)));
  }

  /** Closes every connection; resolves once their sockets are gone. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.pending);
    this.cluster.off('refresh', this.onTopologyChange);
    this.cluster.off('-node', this.onTopologyChange);
    const connections = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(connections.map((connection) => disconnected(connection)));
  }

  /** Connects to the primaries not yet reached (subscribing every channel) and drops the others. */
  private sync(): void {
    if (this.closed) return;
    const primaries = new Map(
      this.cluster.nodes('master').map((node) => [`${node.options.host}:${node.options.port}`, node]),
    );
    for (const [address, connection] of this.connections) {
      if (primaries.has(address)) continue;
      this.connections.delete(address);
      void disconnected(connection);
    }
    for (const [address, node] of primaries) {
      if (this.connections.has(address)) continue;
      // Like the standalone subscriber: no ready check (ioredis#2037); ioredis subscribes again after a reconnect.
      const connection = node.duplicate({ enableReadyCheck: false, disableClientInfo: true, lazyConnect: false });
      connection.on('message', (channel: string, message: string) => this.events.onMessage(channel, message));
      connection.on('connect', () => (connection as { stream?: { unref?(): void } }).stream?.unref?.());
      connection.on('error', (error: unknown) => this.events.onError(error, `subscriber connection to ${address}`));
      this.connections.set(address, connection);
      if (this.channels.size > 0) {
        connection
          .subscribe(...this.channels)
          .catch((error: unknown) => this.events.onError(error, `SUBSCRIBE on ${address}`));
      }
    }
  }
}

/** Disconnects `connection`; resolves once its socket is gone (at once if it had none). */
function disconnected(connection: Redis): Promise<void> {
  const hasSocket = ['connecting', 'connect', 'ready'].includes(connection.status);
  const ended = hasSocket ? new Promise<void>((resolve) => connection.once('end', () => resolve())) : Promise.resolve();
  connection.disconnect();
  return ended;
}
