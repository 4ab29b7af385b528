import { lockContract } from './lock-contract';

// A spin lock never subscribes: the contract's wake test becomes its no-subscription variant.
lockContract({ kind: 'SpinLock', factory: 'getSpinLock', channel: () => undefined, reentrant: true });
