import { lockKind } from './kinds';
import { lockContract } from './lock-contract';

// ioredis' `stringNumbers` turns every integer reply into a string: the library must read both.
lockContract({ ...lockKind('lock'), kind: 'RLock on a stringNumbers connection', connection: { stringNumbers: true } });
