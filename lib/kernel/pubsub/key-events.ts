import { InvalidArgumentError } from '../../errors';
import { ClientLocal, type ClientContext } from '../context';
import type { Listening } from './manager';

/**
 * Told when a lock's key expired: its lease ran out with nobody renewing it (Redisson's
 * `ExpiredObjectListener`). Needs `notify-keyspace-events` with `E` and `x` (or `A`).
 * @category Locks
 */
export interface ExpiredObjectListener {
  /** Called with the lock's name (as given to the factory, without the key prefix). */
  onExpired(name: string): void;
}

/**
 * Told when a lock's key was deleted: its last hold released, or `forceUnlock()` (Redisson's
 * `DeletedObjectListener`). Needs `notify-keyspace-events` with `E` and `g` (or `A`).
 * @category Locks
 */
export interface DeletedObjectListener {
  /** Called with the lock's name (as given to the factory, without the key prefix). */
  onDeleted(name: string): void;
}

/**
 * A listener of a lock's key: an {@link ExpiredObjectListener}, a {@link DeletedObjectListener}, or
 * one object with both methods (told of both; Java's `addListener` takes one kind per call).
 * @category Locks
 */
export type ObjectListener =
  ExpiredObjectListener | DeletedObjectListener | (ExpiredObjectListener & DeletedObjectListener);

/** The key events a listener may hear: the keyevent channel's suffix, the method and the flag it needs. */
const EVENTS = [
  { event: 'expired', method: 'onExpired', flag: 'x' },
  { event: 'del', method: 'onDeleted', flag: 'g' },
] as const;

type KeyEvent = (typeof EVENTS)[number];

/**
 * The client's listeners of keys' expiry and deletion, over keyspace notifications
 * (`__keyevent@<db>__:expired` and `:del`, whose messages are key names): ids per client, one
 * channel subscription per event whatever the number of listeners, and one check per event of the
 * server's `notify-keyspace-events` setting.
 */
export class KeyEventListeners {
  private lastId = 0;
  private readonly registered = new Map<number, Listening[]>();
  private readonly checked = new Set<KeyEvent['event']>();

  constructor(private readonly ctx: ClientContext) {
    ctx.lifetime.addEventListener('abort', () => this.registered.clear(), { once: true });
  }

  /**
   * Calls `listener` for each expiry or deletion of the key `name`; resolves its id once every
   * channel it needs is subscribed.
   * @throws {InvalidArgumentError} for a listener with neither method.
   */
  async add(name: string, listener: ObjectListener): Promise<number> {
    const topology = this.ctx.scripts.topology;
    const methods = listener as unknown as
      Partial<Record<KeyEvent['method'], (name: string) => void>> | null | undefined;
    const events = EVENTS.filter(({ method }) => typeof methods?.[method] === 'function');
    if (events.length === 0) {
      throw new InvalidArgumentError('A lock listener needs an onExpired(name) or an onDeleted(name) method');
    }
    const key = topology.prefix + name;
    const listenings: Listening[] = [];
    try {
      for (const { event, method } of events) {
        const call = methods![method]!.bind(listener);
        listenings.push(
          await this.ctx.pubsub.listen(`__keyevent@${topology.db}__:${event}`, (message) => {
            if (message === key) this.notify(call, name);
          }),
        );
      }
    } catch (error) {
      await Promise.all(listenings.map((listening) => listening.stop()));
      throw error;
    }
    this.lastId += 1;
    this.registered.set(this.lastId, listenings);
    for (const event of events) void this.checkSetting(event);
    return this.lastId;
  }

  /** Stops the listener `id`; resolves once its channels nobody else uses are unsubscribed. Unknown ids: nothing. */
  async remove(id: number): Promise<void> {
    const listenings = this.registered.get(id);
    if (!listenings) return;
    this.registered.delete(id);
    await Promise.all(listenings.map((listening) => listening.stop()));
  }

  private notify(call: (name: string) => void, name: string): void {
    try {
      call(name);
    } catch (error) {
      this.ctx.logger.debug('a lock listener threw', { error, name });
    }
  }

  /** Reads `notify-keyspace-events` once per event and reports it when it leaves `event` out. */
  private async checkSetting({ event, flag }: KeyEvent): Promise<void> {
    if (this.checked.has(event)) return;
    this.checked.add(event);
    let setting: string;
    try {
      const reply = (await this.ctx.scripts.redis.call('CONFIG', 'GET', 'notify-keyspace-events')) as string[];
      setting = reply[1] ?? '';
    } catch (error) {
      // CONFIG refused (ACL, a managed service) or renamed: the setting cannot be known here.
      this.ctx.logger.debug('lock listeners: could not read notify-keyspace-events', { error });
      return;
    }
    if (setting.includes('E') && (setting.includes(flag) || setting.includes('A'))) return;
    const needs = `E${flag}`;
    this.ctx.logger.debug(
      `lock listeners: notify-keyspace-events is '${setting}', without '${needs}': no ${event} event is heard`,
    );
    this.ctx.emit('keyspaceNotificationsOff', { event: event === 'del' ? 'deleted' : 'expired', setting, needs });
  }
}

/** The client's {@link KeyEventListeners}. */
export const KEY_EVENTS = new ClientLocal((ctx) => new KeyEventListeners(ctx));
