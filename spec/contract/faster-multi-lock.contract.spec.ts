import { lockKind } from './kinds';
import { lockContract } from './lock-contract';

lockContract(lockKind('faster-multi-lock'));
