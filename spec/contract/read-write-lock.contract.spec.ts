import { lockKind } from './kinds';
import { lockContract } from './lock-contract';

lockContract(lockKind('write-lock'));
lockContract(lockKind('read-lock'));
