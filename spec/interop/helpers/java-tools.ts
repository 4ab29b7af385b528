import { onPath } from '../../helpers/on-path';

/** Why the interop suite cannot run here, or `undefined` when `java` and `mvn` are both on PATH. */
export function missingJavaTools(): string | undefined {
  const missing = ['java', 'mvn'].filter((command) => !onPath(command));
  return missing.length === 0 ? undefined : `${missing.join(' and ')} not found on PATH`;
}

let warned = false;

/**
 * `describe` for suites that need the Java peer. Without Java or Maven the suite is skipped with a
 * printed reason, unless IOREDISSON_INTEROP=required (as `.ci/run` sets), which makes that a failure.
 */
export function describeInterop(name: string, fn: () => void): void {
  const missing = missingJavaTools();
  if (missing === undefined) {
    describe(name, fn);
    return;
  }
  if (process.env.IOREDISSON_INTEROP === 'required') {
    describe(name, () => {
      it('needs Java and Maven (IOREDISSON_INTEROP=required)', () => {
        throw new Error(`Interop tests against Java Redisson cannot run: ${missing}`);
      });
    });
    return;
  }
  if (!warned) {
    warned = true;
    console.warn(`Skipping the interop tests against Java Redisson: ${missing}. Install a JDK 17+ and Maven to run them.`);
  }
  describe.skip(name, fn);
}
