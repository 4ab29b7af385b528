/**
 * The one decoder of Redis replies. Every script and read goes through it, so that a connection
 * made with ioredis' `stringNumbers` (integers as strings) reads the same as one without.
 */

/** An integer reply as a number (`"1"` and `1` alike). Throws on anything else. */
export function toInteger(reply: unknown): number {
  if (typeof reply === 'number') return reply;
  if (typeof reply === 'string' && reply !== '') {
    const value = Number(reply);
    if (Number.isFinite(value)) return value;
  }
  throw new TypeError(`Expected an integer reply from Redis, got ${describeReply(reply)}`);
}

/** An integer or nil reply: `null` for nil. */
export function toIntegerOrNull(reply: unknown): number | null {
  return reply === null ? null : toInteger(reply);
}

/** An integer reply read as a flag: `1` is true, `0` false. */
export function toFlag(reply: unknown): boolean {
  return toInteger(reply) === 1;
}

/** An array reply of integers read as flags. */
export function toFlags(reply: unknown): boolean[] {
  if (!Array.isArray(reply)) throw new TypeError(`Expected an array reply from Redis, got ${describeReply(reply)}`);
  return reply.map(toFlag);
}

/** An array reply of integers. */
export function toIntegers(reply: unknown): number[] {
  if (!Array.isArray(reply)) throw new TypeError(`Expected an array reply from Redis, got ${describeReply(reply)}`);
  return reply.map(toInteger);
}

/** A bulk-string reply, or `null` for nil. */
export function toStringOrNull(reply: unknown): string | null {
  if (reply === null || typeof reply === 'string') return reply;
  if (Buffer.isBuffer(reply)) return reply.toString();
  if (typeof reply === 'number') return String(reply);
  throw new TypeError(`Expected a string reply from Redis, got ${describeReply(reply)}`);
}

function describeReply(reply: unknown): string {
  if (reply === null) return 'nil';
  if (Array.isArray(reply)) return `an array of ${reply.length}`;
  return `${typeof reply} ${JSON.stringify(reply)?.slice(0, 40)}`;
}
