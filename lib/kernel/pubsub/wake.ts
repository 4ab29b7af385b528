import type { Waiter } from './wait-queue';

/** The local side of one subscribed channel, as its {@link WakeStrategy} sees it. */
export interface ChannelWaiters {
  /** Waiters holding a share of the subscription, parked or not. */
  readonly shares: number;
  /** Waiters parked now. */
  readonly parked: number;
  /**
   * Wakes up to `count` parked waiters, oldest first (`Infinity`: all). What is left is kept as
   * permits for waiters holding a share but not parked yet, so a message between a waiter's attempt
   * and its parking is not lost.
   */
  wake(count: number): void;
  /** Takes the oldest parked waiter out of the queue without waking it. */
  shift(): Waiter | undefined;
  /** Offers `gift` to the oldest parked waiter (see {@link Waiter.claim}); returns whether it claimed it. */
  offer(gift: unknown): boolean;
}

/**
 * How the messages of one channel wake its local waiters. A primitive chooses one per channel; a
 * strategy with state gets a fresh instance per subscription from its {@link WakePolicy}.
 */
export interface WakeStrategy {
  /** A message arrived on the channel. */
  deliver(message: string, waiters: ChannelWaiters): void;
  /** The subscriber reconnected: messages may have been lost, and every waiter is about to be woken. */
  reset?(): void;
}

/** Makes the wake strategy of one channel subscription. */
export type WakePolicy = (waiters: ChannelWaiters) => WakeStrategy;

const ONE: WakeStrategy = { deliver: (_message, waiters) => waiters.wake(1) };
const ALL: WakeStrategy = { deliver: (_message, waiters) => waiters.wake(Infinity) };
const COUNT: WakeStrategy = {
  deliver(message, waiters) {
    const count = Number(message);
    waiters.wake(Number.isSafeInteger(count) && count > 0 ? count : 1);
  },
};

/** Every message wakes one waiter: what was released can go to one of them. */
export const wakeOne: WakePolicy = () => ONE;
/** Every message wakes every waiter: what happened concerns them all. */
export const wakeAll: WakePolicy = () => ALL;
/** A message `n` wakes up to `n` waiters (n units released); anything else wakes one. */
export const wakeCount: WakePolicy = () => COUNT;

/** Wakes every waiter for a message listed in `all`, one waiter for any other. */
export function wakeByMessage(all: readonly string[]): WakePolicy {
  const strategy: WakeStrategy = {
    deliver: (message, waiters) => waiters.wake(all.includes(message) ? Infinity : 1),
  };
  return () => strategy;
}
