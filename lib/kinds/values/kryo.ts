import { InvalidArgumentError } from '../../errors';

/*
 * The bytes Redisson's default codec (`Kryo5Codec`: Kryo 5, no references, no required
 * registration) writes for the few Java types a JavaScript value maps to without doubt. Kryo writes
 * the class first, as a variable-length integer: its registration id plus 2 (String: id 1, int and
 * Integer: id 0, long and Long: id 7), then the value.
 */

const STRING_CLASS = 3;
const INTEGER_CLASS = 2;
const LONG_CLASS = 9;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * A value of a group multi-lock, and the Java value it stands for under Redisson's default codec:
 * a `string` is a `java.lang.String`, a `number` (an integer from -2^31 to 2^31-1) a
 * `java.lang.Integer`, a `bigint` (from -2^63 to 2^63-1) a `java.lang.Long`. `5` and `5n` are
 * different values, as `5` and `5L` are in Java.
 * @category Locks
 */
export type MultiLockValue = string | number | bigint;

/**
 * Kryo5Codec's bytes for `value`.
 * @throws {InvalidArgumentError} for a value that is not a string, an int32 number or an int64 bigint.
 */
export function kryoBytes(value: MultiLockValue): Uint8Array {
  if (typeof value === 'string') return stringBytes(value);
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < INT32_MIN || value > INT32_MAX) {
      throw new InvalidArgumentError(
        `a multi-lock value that is a number must be an integer from ${INT32_MIN} to ${INT32_MAX} (a java.lang.Integer), got ${value}; use a bigint for a java.lang.Long`,
      );
    }
    return Uint8Array.of(INTEGER_CLASS, ...varInt(zigZag(BigInt(value), 32n), 5));
  }
  if (typeof value === 'bigint') {
    if (value < INT64_MIN || value > INT64_MAX) {
      throw new InvalidArgumentError(`a multi-lock value that is a bigint must fit a java.lang.Long, got ${value}`);
    }
    return Uint8Array.of(LONG_CLASS, ...varInt(zigZag(value, 64n), 9));
  }
  throw new InvalidArgumentError(
    `a multi-lock value must be a string, an integer number or a bigint (Redisson's default codec bytes are known for these only), got ${describe(value)}`,
  );
}

/** Kryo's `writeString`: short ASCII strings as raw bytes with the last byte's top bit set, others as a length and UTF-8. */
function stringBytes(value: string): Uint8Array {
  const length = value.length;
  if (length === 0) return Uint8Array.of(STRING_CLASS, 0x81);
  if (length > 1 && length <= 32 && /^[\u0000-\u007f]*$/.test(value)) {
    const bytes = new Uint8Array(length + 1);
    bytes[0] = STRING_CLASS;
    for (let i = 0; i < length; i++) bytes[i + 1] = value.charCodeAt(i);
    bytes[length] = bytes[length]! | 0x80;
    return bytes;
  }
  const out = [STRING_CLASS, ...utf8Length(length + 1)];
  // Kryo writes each UTF-16 unit on its own: a surrogate takes 3 bytes, as in CESU-8.
  for (let i = 0; i < length; i++) {
    const c = value.charCodeAt(i);
    if (c <= 0x7f) out.push(c);
    else if (c > 0x7ff) out.push(0xe0 | ((c >> 12) & 0x0f), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
    else out.push(0xc0 | ((c >> 6) & 0x1f), 0x80 | (c & 0x3f));
  }
  return Uint8Array.from(out);
}

/** Kryo's string length prefix: 6 bits in the first byte (bit 8 marks UTF-8, bit 7 "more"), then 7 bits per byte. */
function utf8Length(value: number): number[] {
  const out = [(value & 0x3f) | 0x80 | (value >>> 6 !== 0 ? 0x40 : 0)];
  let rest = value >>> 6;
  while (rest !== 0) {
    out.push((rest & 0x7f) | (rest >>> 7 !== 0 ? 0x80 : 0));
    rest >>>= 7;
  }
  return out;
}

function zigZag(value: bigint, bits: bigint): bigint {
  return BigInt.asUintN(Number(bits), (value << 1n) ^ (value >> (bits - 1n)));
}

/** Kryo's variable-length integer: 7 bits per byte, low first; the last of `maxBytes` bytes holds 8. */
function varInt(value: bigint, maxBytes: number): number[] {
  const out: number[] = [];
  let rest = value;
  for (let i = 1; i < maxBytes && rest >> 7n !== 0n; i++) {
    out.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  out.push(Number(rest & 0xffn));
  return out;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object') return `an object (${Object.prototype.toString.call(value)})`;
  return `a value of type ${typeof value}`;
}
