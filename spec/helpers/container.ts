import { tmpdir } from 'node:os';
import type { ServerProcess } from './redis-process';

/**
 * Starts `redis-server <args>` in a container of `image` through testcontainers, on the host's network
 * (so the server listens on the loopback port its args name, as a local process would) with the temp
 * folder mounted at the same path (cluster and sentinel files live there). Resolves once the server
 * logs `readyLine`. Signals reach the server itself (it is the container's first process), so SIGSTOP
 * freezes it and SIGKILL is a crash; the container is removed once the server exits.
 */
export async function startContainer(
  image: string,
  args: readonly string[],
  timeoutMs: number,
  readyLine: string,
): Promise<ServerProcess> {
  // Loaded only here: runs with a local binary never touch Docker.
  const { GenericContainer, Wait, getContainerRuntimeClient } = await import('testcontainers');
  let runtime: Awaited<ReturnType<typeof getContainerRuntimeClient>>;
  try {
    runtime = await getContainerRuntimeClient();
  } catch (error) {
    throw new Error(
      'No server for the tests: REDIS_URL is unset, there is no local redis-server (PATH, IOREDISSON_SERVER_BIN) ' +
        `and no Docker engine answered for testcontainers (${(error as Error).message})`,
    );
  }
  const started = await new GenericContainer(image)
    .withEntrypoint(['redis-server'])
    .withCommand([...args])
    .withNetworkMode('host')
    .withBindMounts([{ source: tmpdir(), target: tmpdir(), mode: 'rw' }])
    .withWaitStrategy(Wait.forLogMessage(readyLine))
    .withStartupTimeout(timeoutMs)
    .start();
  const container = runtime.container.getById(started.getId());
  let exited = false;
  // Removed once the server exits: the helpers stop servers by signal, not through testcontainers.
  const exit = container.wait().then(
    () => container.remove({ force: true }).catch(() => undefined),
    () => undefined, // already removed: gone all the same
  );
  void exit.then(() => (exited = true));
  return {
    id: started.getId(),
    get exited() {
      return exited;
    },
    exit,
    kill(signal) {
      if (!exited) container.kill({ signal }).catch(() => undefined); // not running any more
    },
    async run(command) {
      const { exitCode, output } = await started.exec([...command]);
      if (exitCode !== 0)
        throw new Error(`${command.join(' ')} exited with ${exitCode} in container ${started.getId()}:\n${output}`);
      return output;
    },
  };
}
