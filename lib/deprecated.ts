/**
 * Names of 0.1 kept for one more release. Every kind's class is now `R` + the name its factory
 * gives it (`getFairLock` → {@link RFairLock}), and the handle every kind returns is {@link Handle}.
 * @module
 */
import { Handle } from './kernel/handle';
import { RFairLock } from './kinds/fair-lock';
import { RFencedLock } from './kinds/fenced-lock';
import { RMultiLock } from './kinds/multi-lock';
import { RNonReentrantFairLock } from './kinds/non-reentrant-fair-lock';
import { RNonReentrantLock } from './kinds/non-reentrant-lock';
import { RRedLock } from './kinds/red-lock';
import { RSpinLock } from './kinds/spin-lock';

/** @deprecated Renamed {@link Handle}; this alias goes in 1.0. @category Deprecated */
export const LockHandle = Handle;
/** @deprecated Renamed {@link Handle}; this alias goes in 1.0. @category Deprecated */
export type LockHandle = Handle;
/** @deprecated Renamed {@link RFairLock}; this alias goes in 1.0. @category Deprecated */
export const FairLock = RFairLock;
/** @deprecated Renamed {@link RFairLock}; this alias goes in 1.0. @category Deprecated */
export type FairLock = RFairLock;
/** @deprecated Renamed {@link RFencedLock}; this alias goes in 1.0. @category Deprecated */
export const FencedLock = RFencedLock;
/** @deprecated Renamed {@link RFencedLock}; this alias goes in 1.0. @category Deprecated */
export type FencedLock = RFencedLock;
/** @deprecated Renamed {@link RSpinLock}; this alias goes in 1.0. @category Deprecated */
export const SpinLock = RSpinLock;
/** @deprecated Renamed {@link RSpinLock}; this alias goes in 1.0. @category Deprecated */
export type SpinLock = RSpinLock;
/** @deprecated Renamed {@link RNonReentrantLock}; this alias goes in 1.0. @category Deprecated */
export const NonReentrantLock = RNonReentrantLock;
/** @deprecated Renamed {@link RNonReentrantLock}; this alias goes in 1.0. @category Deprecated */
export type NonReentrantLock = RNonReentrantLock;
/** @deprecated Renamed {@link RNonReentrantFairLock}; this alias goes in 1.0. @category Deprecated */
export const NonReentrantFairLock = RNonReentrantFairLock;
/** @deprecated Renamed {@link RNonReentrantFairLock}; this alias goes in 1.0. @category Deprecated */
export type NonReentrantFairLock = RNonReentrantFairLock;
/** @deprecated Renamed {@link RMultiLock}; this alias goes in 1.0. @category Deprecated */
export const MultiLock = RMultiLock;
/** @deprecated Renamed {@link RMultiLock}; this alias goes in 1.0. @category Deprecated */
export type MultiLock = RMultiLock;
/** @deprecated Renamed {@link RRedLock}; this alias goes in 1.0. @category Deprecated */
export const RedLock = RRedLock;
/** @deprecated Renamed {@link RRedLock}; this alias goes in 1.0. @category Deprecated */
export type RedLock = RRedLock;
