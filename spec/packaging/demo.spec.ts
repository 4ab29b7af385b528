import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, run, runOk } from '../helpers/consumer';

// `npm run demo` on a fresh machine: it starts its own redis-server and must print no connection
// error while that server starts (it used to connect first and get ECONNREFUSED).
jest.setTimeout(180_000);

it('npm run demo completes without a connection error and loses no update', async () => {
  if (!existsSync(join(ROOT, 'dist', 'index.mjs'))) await runOk('npm', ['run', 'build']);
  const result = await run(process.execPath, ['examples/demo.mjs'], { timeout: 150_000 });
  expect(result.stderr).toBe('');
  expect(result.stdout).not.toMatch(/ECONNREFUSED|Unhandled error/);
  expect(result.stdout).toMatch(/counter = 800, expected 800: no update lost/);
  expect(result.stdout).toMatch(/lock keys left: 0/);
  expect(result.code).toBe(0);
});
