import { readWriteLockChannel } from '../../lib/keys';
import { lockContract } from './lock-contract';

lockContract({ kind: 'RWriteLock', factory: 'getReadWriteLock.writeLock', channel: readWriteLockChannel, reentrant: true });
lockContract({
  kind: 'RReadLock',
  factory: 'getReadWriteLock.readLock',
  channel: readWriteLockChannel,
  reentrant: true,
  shared: { excludedBy: 'getReadWriteLock.writeLock' },
});
