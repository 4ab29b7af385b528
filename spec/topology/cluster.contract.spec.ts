import { LOCK_KINDS } from '../contract/kinds';
import { lockContract } from '../contract/lock-contract';
import { clusterTopology, useTopology } from '../helpers/topology';

// Three primaries with one replica each: every kind's contract, with replica sync on (the default).
const cluster = useTopology(clusterTopology());
for (const kind of LOCK_KINDS) lockContract(kind, cluster);
