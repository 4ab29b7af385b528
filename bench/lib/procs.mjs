// Every child process and redis-server the bench starts is registered here and killed on any exit.
const children = new Set();

/** Registers a ChildProcess so it is killed when the bench exits, however it exits. */
export function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Kills every tracked child that is still running. */
export function killAll(signal = 'SIGKILL') {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  }
  children.clear();
}

process.once('exit', () => killAll());
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    killAll();
    process.exit(130);
  });
}
