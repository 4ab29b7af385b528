import type { LockLostError } from './errors';

/** Identifies one owner's hold on one lock. */
export interface LockEvent {
  /** The lock's name. */
  name: string;
  /** The owner token `<clientId>:<threadId>`. */
  owner: string;
}

/** Events of a {@link RedissonClient}, by name. */
export type RedissonEvents = {
  /** A lock was acquired or re-entered. */
  acquired: LockEvent;
  /** One hold of a lock was released (`fully`: the lock is now free). */
  released: LockEvent & {
    /** Whether that was the owner's last hold, so the lock is now free. */
    fully: boolean;
  };
  /** A lock held with watchdog renewal was lost; work it guarded since may not have been exclusive. */
  lockLost: LockEvent & {
    /** The error the lock's handles abort with, saying why the lease was lost. */
    error: LockLostError;
  };
  /** The subscriber connection came back; every waiter was woken to re-check. */
  subscriberReconnected: {
    /** Channels subscribed again on the new connection. */
    channels: number;
  };
};
