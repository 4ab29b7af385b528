/*
 * HighwayHash-128 (Google's keyed hash), as Redisson's `Hash.hash128toBase64` computes it with its own
 * fixed key: the field a group multi-lock stores for one value is this hash of the value's codec
 * bytes. 64-bit lanes are BigInts reduced modulo 2^64 after each step.
 */

const MASK64 = (1n << 64n) - 1n;
const MASK32 = 0xffffffffn;

/** Redisson's key (`org.redisson.misc.Hash`). */
const KEY = [0x9e3779b97f4a7c15n, 0xf39cc0605cedc834n, 0x1082276bf3a27251n, 0xf86c6a11d0c18e95n] as const;
const INIT_MUL0 = [0xdbe6d5d5fe4cce2fn, 0xa4093822299f31d0n, 0x13198a2e03707344n, 0x243f6a8885a308d3n] as const;
const INIT_MUL1 = [0x3bd39e10cb0ef593n, 0xc0acf169b5f18a8cn, 0xbe5466cf34e90c6cn, 0x452821e638d01377n] as const;

type Lanes = [bigint, bigint, bigint, bigint];

/** Swaps the two 32-bit halves of a lane. */
const swapHalves = (x: bigint): bigint => (x >> 32n) | ((x << 32n) & MASK64);

function zipperMerge0(hi: bigint, lo: bigint): bigint {
  return (
    ((((lo & 0xff000000n) | (hi & 0xff00000000n)) >> 24n) |
      (((lo & 0xff0000000000n) | (hi & 0xff000000000000n)) >> 16n) |
      (lo & 0xff0000n) |
      ((lo & 0xff00n) << 32n) |
      ((hi & 0xff00000000000000n) >> 8n) |
      (lo << 56n)) &
    MASK64
  );
}

function zipperMerge1(hi: bigint, lo: bigint): bigint {
  return (
    ((((hi & 0xff000000n) | (lo & 0xff00000000n)) >> 24n) |
      (hi & 0xff0000n) |
      ((hi & 0xff0000000000n) >> 16n) |
      ((hi & 0xff00n) << 24n) |
      ((lo & 0xff000000000000n) >> 8n) |
      ((hi & 0xffn) << 48n) |
      (lo & 0xff00000000000000n)) &
    MASK64
  );
}

class HighwayState {
  readonly v0: Lanes;
  readonly v1: Lanes;
  readonly mul0: Lanes = [...INIT_MUL0];
  readonly mul1: Lanes = [...INIT_MUL1];

  constructor() {
    this.v0 = [0, 1, 2, 3].map((i) => INIT_MUL0[i]! ^ KEY[i]!) as Lanes;
    this.v1 = [0, 1, 2, 3].map((i) => INIT_MUL1[i]! ^ swapHalves(KEY[i]!)) as Lanes;
  }

  update(a: Lanes): void {
    const { v0, v1, mul0, mul1 } = this;
    for (let i = 0; i < 4; i++) v1[i] = (v1[i]! + mul0[i]! + a[i]!) & MASK64;
    for (let i = 0; i < 4; i++) {
      mul0[i] = mul0[i]! ^ ((v1[i]! & MASK32) * (v0[i]! >> 32n));
      v0[i] = (v0[i]! + mul1[i]!) & MASK64;
      mul1[i] = mul1[i]! ^ ((v0[i]! & MASK32) * (v1[i]! >> 32n));
    }
    v0[0] = (v0[0] + zipperMerge0(v1[1], v1[0])) & MASK64;
    v0[1] = (v0[1] + zipperMerge1(v1[1], v1[0])) & MASK64;
    v0[2] = (v0[2] + zipperMerge0(v1[3], v1[2])) & MASK64;
    v0[3] = (v0[3] + zipperMerge1(v1[3], v1[2])) & MASK64;
    v1[0] = (v1[0] + zipperMerge0(v0[1], v0[0])) & MASK64;
    v1[1] = (v1[1] + zipperMerge1(v0[1], v0[0])) & MASK64;
    v1[2] = (v1[2] + zipperMerge0(v0[3], v0[2])) & MASK64;
    v1[3] = (v1[3] + zipperMerge1(v0[3], v0[2])) & MASK64;
  }

  updatePacket(bytes: Uint8Array, at: number): void {
    const view = new DataView(bytes.buffer, bytes.byteOffset + at, 32);
    this.update([0, 8, 16, 24].map((offset) => view.getBigUint64(offset, true)) as Lanes);
  }

  /** The last `size` (1 to 31) bytes, from `at`. */
  updateRemainder(bytes: Uint8Array, at: number, size: number): void {
    const sizeMod4 = size & 3;
    const whole = size & ~3;
    const big = BigInt(size);
    for (let i = 0; i < 4; i++) this.v0[i] = (this.v0[i]! + (big << 32n) + big) & MASK64;
    for (let i = 0; i < 4; i++) this.v1[i] = rotateHalvesLeft(this.v1[i]!, big);
    const packet = new Uint8Array(32);
    packet.set(bytes.subarray(at, at + whole));
    if ((size & 16) !== 0) {
      for (let i = 0; i < 4; i++) packet[28 + i] = bytes[at + whole + i + sizeMod4 - 4]!;
    } else if (sizeMod4 !== 0) {
      packet[16] = bytes[at + whole]!;
      packet[17] = bytes[at + whole + (sizeMod4 >>> 1)]!;
      packet[18] = bytes[at + whole + sizeMod4 - 1]!;
    }
    this.updatePacket(packet, 0);
  }

  finalize128(): [bigint, bigint] {
    for (let round = 0; round < 6; round++) {
      const { v0 } = this;
      this.update([swapHalves(v0[2]), swapHalves(v0[3]), swapHalves(v0[0]), swapHalves(v0[1])]);
    }
    const { v0, v1, mul0, mul1 } = this;
    return [(v0[0] + mul0[0] + v1[2] + mul1[2]) & MASK64, (v0[1] + mul0[1] + v1[3] + mul1[3]) & MASK64];
  }
}

/** Rotates each 32-bit half of a lane left by `count` (1 to 31) bits. */
function rotateHalvesLeft(lane: bigint, count: bigint): bigint {
  const rotate = (half: bigint) => ((half << count) & MASK32) | (half >> (32n - count));
  return rotate(lane & MASK32) | (rotate(lane >> 32n) << 32n);
}

/**
 * Redisson's `Hash.hash128toBase64`: the 128-bit HighwayHash of `bytes` under Redisson's key, as 16
 * big-endian bytes in standard Base64 without the trailing `==` (22 characters).
 */
export function hash128toBase64(bytes: Uint8Array): string {
  const state = new HighwayState();
  let at = 0;
  for (; at + 32 <= bytes.length; at += 32) state.updatePacket(bytes, at);
  if ((bytes.length & 31) !== 0) state.updateRemainder(bytes, at, bytes.length & 31);
  const [first, second] = state.finalize128();
  const out = Buffer.alloc(16);
  out.writeBigUInt64BE(first, 0);
  out.writeBigUInt64BE(second, 8);
  return out.toString('base64').slice(0, -2);
}
