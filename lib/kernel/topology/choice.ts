/**
 * A choice the client makes about its deployment once (whether pub/sub is sharded, and so which
 * command publishes). Making it may need a round trip (probing a cluster for sharded pub/sub), so it
 * is a promise; once settled it is also readable at once, so that a release or a SUBSCRIBE can be
 * written before its caller's next command.
 */
export class Choice<T> {
  /** The value once chosen; `undefined` while the probe is in flight. */
  known: T | undefined;

  constructor(
    /** Settles with the value, or rejects if the probe failed. */
    readonly ready: Promise<T>,
  ) {
    ready.then(
      (value) => (this.known = value),
      () => undefined,
    );
  }

  /** Calls `use` with the value: synchronously once it is known, else when it is. */
  with<R>(use: (value: T) => Promise<R>): Promise<R> {
    const { known } = this;
    return known !== undefined ? use(known) : this.ready.then(use);
  }
}
