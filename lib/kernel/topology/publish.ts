/** The command that lock, semaphore and latch scripts publish with: classic or sharded pub/sub. */
export type PublishCommandName = 'PUBLISH' | 'SPUBLISH';

/**
 * The publish command chosen for a client. The choice may need a round trip (probing a cluster for
 * sharded pub/sub), so it is a promise; once settled it is also readable at once, so that a release
 * can be written before its caller's next command.
 */
export class PublishCommand {
  /** The command once chosen; `undefined` while the probe is in flight. */
  known: PublishCommandName | undefined;

  constructor(
    /** Settles with the command, or rejects if the probe failed. */
    readonly ready: Promise<PublishCommandName>,
  ) {
    ready.then(
      (command) => (this.known = command),
      () => undefined,
    );
  }

  /** Calls `send` with the command: synchronously once it is known, else when it is. */
  with<T>(send: (command: PublishCommandName) => Promise<T>): Promise<T> {
    return this.known ? send(this.known) : this.ready.then(send);
  }
}
