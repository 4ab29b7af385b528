import type { ForceUnlockResult } from './force-unlock';
import { duration, whoLong, whoShort, type Listed, type Report } from './inspect';
import type { WaitsReport } from './waits';

/** A report as text for a terminal. */
export function renderReport(report: Report, now = Date.now()): string {
  const lines: string[] = [`${report.name}: ${report.label}`];
  const row = (label: string, value: string): void => {
    lines.push(`  ${label.padEnd(10)} ${value}`);
  };
  const ttl = report.ttl === -2 ? 'no key' : duration(report.ttl);
  switch (report.kind) {
    case 'lock':
    case 'fencedLock':
    case 'fairLock':
    case 'readWriteLock': {
      const owners = report.owners ?? [];
      if (report.kind === 'readWriteLock') row('mode', report.mode ?? 'unknown');
      row('state', owners.length === 0 ? 'free' : report.ttl === -1 ? 'held, no expiry' : `held, lease ${ttl} left`);
      for (const owner of owners) {
        const side = owner.side ? `${owner.side} ` : '';
        const leases = owner.readLeases ? `; read-hold leases ${owner.readLeases.map(duration).join(', ')}` : '';
        row('owner', `${owner.clientId} thread ${owner.threadId}: ${side}holds ${owner.holds}${leases}`);
        if (owner.record) row('  who', whoLong(owner.record, now));
      }
      if (report.kind === 'fencedLock') row('token', report.token ?? 'none (never locked)');
      if (report.kind === 'fairLock') {
        const queue = report.queue ?? [];
        row('queue', queue.length === 0 ? 'empty' : `${queue.length} waiting (${report.keys.queue?.key})`);
        for (const waiter of queue) {
          const deadline =
            waiter.deadline === null ? 'no deadline' : `deadline ${new Date(waiter.deadline).toISOString()} (${waiter.deadlineIn! > 0 ? 'in ' : ''}${duration(waiter.deadlineIn!)})`;
          row(`  #${waiter.position}`, `${waiter.clientId} thread ${waiter.threadId}, ${deadline}`);
          if (waiter.record) row('    who', whoLong(waiter.record, now));
        }
      }
      break;
    }
    case 'semaphore':
      row('permits', `${report.permits} available`);
      row('expiry', report.ttl === -1 ? 'none' : ttl);
      break;
    case 'permitExpirableSemaphore': {
      const acquired = report.acquired ?? [];
      row('permits', `${report.permits} available, ${acquired.length} acquired`);
      for (const permit of acquired) {
        const expiry =
          permit.expiresAt === null ? 'never expires' : `${permit.expired ? 'expired' : 'expires'} ${new Date(permit.expiresAt).toISOString()} (${permit.expiresIn! > 0 ? 'in ' : ''}${duration(permit.expiresIn!)})`;
        row('  permit', `${permit.id}, ${expiry}`);
      }
      break;
    }
    case 'fasterMultiLock': {
      const values = report.values ?? [];
      row('state', values.length === 0 ? 'free' : `${values.length} value(s) held; group ${report.ttl === -1 ? 'has no expiry' : `expires in ${ttl}`}`);
      for (const value of values) {
        const expiry = value.expiresIn === null ? 'no expiry' : value.expiresIn < 0 ? `expired ${duration(value.expiresIn)}` : `expires in ${duration(value.expiresIn)}`;
        row('  value', `${value.field}: ${value.clientId} thread ${value.threadId}, holds ${value.holds}, ${expiry}`);
      }
      break;
    }
    case 'countDownLatch':
      row('count', `${report.count} (opens at 0)`);
      row('expiry', report.ttl === -1 ? 'none' : ttl);
      break;
  }
  row('channel', `${report.channel.name} (${report.channel.subscribers} listening)`);
  for (const note of report.notes) row('note', note);
  return lines.join('\n');
}

/** `list` output as an aligned table. */
export function renderList(rows: Listed[]): string {
  if (rows.length === 0) return 'no Redisson lock, semaphore or latch found';
  const width = Math.min(60, Math.max(4, ...rows.map((r) => r.name.length)));
  const kindWidth = Math.max(4, ...rows.map((r) => (r.kind ?? '?').length));
  return [
    `${'NAME'.padEnd(width)}  ${'KIND'.padEnd(kindWidth)}  STATE`,
    ...rows.map((r) => `${r.name.padEnd(width)}  ${(r.kind ?? '?').padEnd(kindWidth)}  ${r.summary}`),
  ].join('\n');
}

/** What force-unlock did, as a sentence. */
export function renderForceUnlock(result: ForceUnlockResult): string {
  if (!result.unlocked) return `${result.name} was not held: nothing deleted`;
  const holders = (result.before.owners ?? []).map((o) => `${o.field} x${o.holds}`).join(', ') || 'nobody';
  const told = result.published ? `; published ${result.published.message} on ${result.published.channel}` : '';
  return `force-unlocked ${result.name} (held by ${holders})${told}`;
}

/** `waits` output: each recorded wait, oldest first, those in a cycle marked, then the cycles. */
export function renderWaits(report: WaitsReport): string {
  const { waits, cycles } = report;
  if (waits.length === 0) return 'no recorded waits (only clients with deadlockDetection record them, once parked past its after)';
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  const lines = [`${plural(waits.length, 'recorded wait')}, ${plural(cycles.length, 'deadlock cycle')}`];
  for (const wait of waits) {
    const heldBy = wait.heldBy.length === 0 ? 'free now' : `held by ${wait.heldBy.join(', ')}`;
    const mark = wait.inCycle ? '  [deadlock]' : '';
    lines.push(`  ${wait.owner} (${whoShort(wait.record)}) waits ${duration(wait.waitingMs)} for '${wait.lock}', ${heldBy}${mark}`);
  }
  cycles.forEach((owners, i) => lines.push(`deadlock ${i + 1}: ${owners.join(' <-> ')}`));
  return lines.join('\n');
}
