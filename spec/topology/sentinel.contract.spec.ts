import { LOCK_KINDS } from '../contract/kinds';
import { lockContract } from '../contract/lock-contract';
import { sentinelTopology, useTopology } from '../helpers/topology';

// One primary, two replicas, three sentinels; clients connect through the sentinels.
const sentinel = useTopology(sentinelTopology());
for (const kind of LOCK_KINDS) lockContract(kind, sentinel);
