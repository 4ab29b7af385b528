import { LOCK_KINDS, SEMAPHORE_KINDS } from '../contract/kinds';
import { latchContract } from '../contract/latch-contract';
import { lockContract } from '../contract/lock-contract';
import { semaphoreContract } from '../contract/semaphore-contract';
import { sentinelTopology, useTopology } from '../helpers/topology';

// One primary, two replicas, three sentinels, one deployment for the file; clients connect through
// the sentinels. Every lock kind's and every semaphore kind's contract, and the count-down latch's.
const sentinel = useTopology(sentinelTopology());
for (const kind of LOCK_KINDS) lockContract(kind, sentinel);
for (const kind of SEMAPHORE_KINDS) semaphoreContract(kind, sentinel);
latchContract(sentinel);
