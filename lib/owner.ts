import { AsyncLocalStorage } from 'node:async_hooks';
import type { ScopeLabel } from './kernel/owner-record';

/**
 * Options of `RedissonClient.run`.
 * @category Options
 */
export interface ScopeOptions {
  /**
   * What the scope is doing, e.g. `'order 42 checkout'`: shown by `lock.holders()` and the CLI for
   * the locks it holds or waits for, when the client records itself (option `ownerInfo`). Ignored
   * inside an open scope, which keeps its own.
   */
  label?: string;
}

/**
 * Owner identity: Node's stand-in for Redisson's threads. An owner scope is one logical thread id
 * shared by everything awaited inside it, so locks taken there re-enter. Outside any scope every
 * acquisition gets an id of its own, which the lock's hold ledger keeps while it is held, so that
 * `unlock()` (on any object for that name) releases what was acquired.
 */
export class OwnerScopes {
  private readonly storage = new AsyncLocalStorage<number>();
  private lastThreadId = 0;
  private warnedSelfWait = false;
  /** Labels of the labelled scopes running now. */
  private readonly labels = new Map<number, ScopeLabel>();

  /** @param onLabelEnd told when a labelled scope ends. */
  constructor(private readonly onLabelEnd?: (threadId: number) => void) {}

  /** A thread id never handed out before by this client. */
  nextThreadId(): number {
    this.lastThreadId += 1;
    return this.lastThreadId;
  }

  /** Thread id of the scope the caller runs in, if any. */
  current(): number | undefined {
    return this.storage.getStore();
  }

  /** The label of `threadId`'s scope while it runs, if it has one. */
  labelOf(threadId: number): ScopeLabel | undefined {
    return this.labels.get(threadId);
  }

  /** Runs `fn` in the caller's scope, or in a new one (labelled if `label` is given) when there is none. */
  run<T>(fn: () => T, label?: string): T {
    if (this.current() !== undefined) return fn();
    const threadId = this.nextThreadId();
    if (label === undefined) return this.storage.run(threadId, fn);
    this.labels.set(threadId, { label, since: Date.now() });
    const end = (): void => {
      this.labels.delete(threadId);
      this.onLabelEnd?.(threadId);
    };
    let result: T;
    try {
      result = this.storage.run(threadId, fn);
    } catch (error) {
      end();
      throw error;
    }
    if (result instanceof Promise) result.then(end, end);
    else end();
    return result;
  }

  /**
   * Warns, once per client, that a bare `lock()` of `name` outside any scope waits for this client's
   * own holder of `name` outside any scope: if its caller is that holder, it waits for itself.
   */
  warnSelfWait(name: string): void {
    if (this.warnedSelfWait) return;
    this.warnedSelfWait = true;
    process.emitWarning(
      `Lock '${name}' is already held by this client outside an owner scope; this call waits for that ` +
        'holder. If the caller is the holder itself it waits for itself: run the work in redisson.run() ' +
        'or lock.using() to re-enter.',
      { code: 'IOREDISSON_SELF_WAIT' },
    );
  }
}
