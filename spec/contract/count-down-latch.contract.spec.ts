import { latchContract } from './latch-contract';

latchContract();
