import type { Cluster, Redis } from 'ioredis';

/**
 * A connection the user hands to the client: a standalone/Sentinel `Redis` or a `Cluster`.
 * @category Client
 */
export type RedisConnection = Redis | Cluster;

/**
 * Replies saying a command did not run, because the cluster (or the node) cannot serve it now: a
 * slot without a primary, a resharding or failover under way, a server still loading its data, a
 * write sent to a node that became a replica.
 */
const NOT_RUN = /^(CLUSTERDOWN|TRYAGAIN|MOVED|ASK|LOADING|MASTERDOWN|READONLY)\b/;

/** Messages of ioredis for a command that was never written to a socket. */
const NEVER_SENT = /^(Stream isn't writeable|Cluster isn't ready) and enableOfflineQueue/;

/**
 * Messages of ioredis (and codes of Node's sockets) for a command whose connection failed: closed,
 * reset, refused, out of retries or timed out. Whether the command ran is then unknown.
 */
const IN_TRANSIT = /^(Connection is closed|Command timed out|Command aborted|Socket timeout|Cluster is (disconnected|ended)|None of startup nodes|Too many Cluster redirections|Reached the max retries|No subscriber for the cluster|connect E)/;
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND']);

/**
 * Whether `error` says Redis could not be reached or could not serve the command now (see
 * {@link surelyNotRun}), rather than that the command itself was refused (a script error, an ACL).
 */
export function isTransportError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code } = error as { code?: unknown };
  if (typeof code === 'string' && SOCKET_CODES.has(code)) return true;
  return IN_TRANSIT.test(error.message) || surelyNotRun(error);
}

/**
 * Whether a transport error proves the command did not run, so that sending it again cannot count
 * twice: it was never sent, or the cluster answered that it cannot serve it (also as the last error
 * of ioredis's "Too many Cluster redirections").
 */
export function surelyNotRun(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const last = /^Too many Cluster redirections\. Last error: (?:\w*Error: )?(.*)$/s.exec(error.message)?.[1];
  const message = last ?? error.message;
  return NOT_RUN.test(message) || NEVER_SENT.test(message);
}
