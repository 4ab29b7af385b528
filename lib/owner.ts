import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Owner scopes: Node's stand-in for Redisson's threads. A scope is one logical thread id shared by
 * everything awaited inside it, so locks taken there re-enter; outside any scope every acquisition
 * gets an id of its own.
 */
export class OwnerScopes {
  private readonly storage = new AsyncLocalStorage<number>();
  private lastThreadId = 0;

  /** A thread id never handed out before by this client. */
  nextThreadId(): number {
    this.lastThreadId += 1;
    return this.lastThreadId;
  }

  /** Thread id of the scope the caller runs in, if any. */
  current(): number | undefined {
    return this.storage.getStore();
  }

  /** Runs `fn` in the caller's scope, or in a new one when there is none. */
  run<T>(fn: () => T): T {
    if (this.current() !== undefined) return fn();
    return this.storage.run(this.nextThreadId(), fn);
  }
}
