// ioredisson with "who holds it" and deadlock detection on (options ownerInfo and deadlockDetection):
// what the two cost against the plain ioredisson adapter in the same run.
import { setup as setupPlain } from './ioredisson.mjs';

export const name = 'ioredisson + ownerInfo, deadlockDetection';
export const pkg = 'ioredisson';
export const waiting = 'pub/sub wake-up; waits over 1 s recorded and searched';
export const variantOf = 'ioredisson';

const OPTIONS = { ownerInfo: { service: 'bench' }, deadlockDetection: { after: 1_000 } };

export function setup({ url, options }) {
  return setupPlain({ url, options: { ...options, ...OPTIONS } });
}
