import { LOCK_KINDS, SEMAPHORE_KINDS } from '../contract/kinds';
import { latchContract } from '../contract/latch-contract';
import { lockContract } from '../contract/lock-contract';
import { semaphoreContract } from '../contract/semaphore-contract';
import { clusterTopology, useTopology } from '../helpers/topology';

// Three primaries with one replica each, one deployment for the file: every lock kind's and every
// semaphore kind's contract, and the count-down latch's, with replica sync on (the default).
const cluster = useTopology(clusterTopology());
for (const kind of LOCK_KINDS) lockContract(kind, cluster);
for (const kind of SEMAPHORE_KINDS) semaphoreContract(kind, cluster);
latchContract(cluster);
