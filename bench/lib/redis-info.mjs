// Server-side counters read on a separate admin connection.

/** Commands executed by Redis so far, by name (INFO commandstats; includes calls made inside scripts). */
export async function commandStats(admin) {
  const info = await admin.info('commandstats');
  const stats = {};
  for (const [, name, calls] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) stats[name] = Number(calls);
  return stats;
}

/** Admin commands the bench itself sends on its own connection; left out of every delta. */
const ADMIN = /^(info|pubsub|client|flushall|config|dbsize)(\||$)/;

/** Commands executed between two snapshots, the bench's own admin commands left out. */
export function statsDelta(before, after) {
  const delta = {};
  for (const [name, calls] of Object.entries(after)) {
    const n = calls - (before[name] ?? 0);
    if (n > 0 && !ADMIN.test(name)) delta[name] = n;
  }
  return delta;
}

/** Channels with at least one subscriber matching `pattern`. */
export async function channelCount(admin, pattern = '*') {
  return (await admin.pubsub('CHANNELS', pattern)).length;
}

/** Client connections currently subscribed to something. */
export async function subscriberConnections(admin) {
  const list = await admin.client('LIST');
  return list.split('\n').filter((line) => /\b(sub|psub|ssub)=[1-9]/.test(line)).length;
}

/** CPU time the Redis server has used so far, ms (INFO cpu: user + system, main and child threads). */
export async function serverCpuMs(admin) {
  const info = await admin.info('cpu');
  const seconds = (name) => Number(info.match(new RegExp(`^${name}:([\\d.]+)`, 'm'))?.[1] ?? 0);
  return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1000;
}
