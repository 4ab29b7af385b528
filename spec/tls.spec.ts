import { join } from 'node:path';
import { LOCK_USER, LOCK_USER_RULES, lockContractAsUser } from './helpers/acl';
import { ROOT, run, runOk } from './helpers/consumer';
import { eventually } from './helpers/redis-server';
import { TLS_STANDALONE } from './helpers/tls';
import { useTopology } from './helpers/topology';

/*
 * Managed Redis as most production services reach it: over TLS, as an ACL user with only the rights
 * the least-privilege recipe of docs/security.md lists. The server has no plain port, so every connection the
 * library makes (its own subscriber included) must carry the TLS settings and the user of the
 * connection it was given.
 */

const fixture = useTopology(TLS_STANDALONE);
const prepare = () =>
  fixture
    .deployment()
    .admin()
    .call('ACL', 'SETUSER', LOCK_USER.username, 'reset', ...LOCK_USER_RULES);

lockContractAsUser('RLock over TLS as a least-privilege ACL user', prepare, fixture);

describe('over TLS as a least-privilege ACL user', () => {
  const { client, deployment } = fixture;
  beforeAll(prepare);

  /** `CLIENT LIST` rows of connections that are not the test's admin (`default`). */
  const libraryConnections = async () => {
    const list = (await deployment().admin().call('CLIENT', 'LIST')) as string;
    return list
      .trim()
      .split('\n')
      .map((line) => Object.fromEntries(line.split(' ').map((field) => field.split('=') as [string, string])))
      .filter((row) => row.user !== 'default');
  };

  it("wakes a waiter by message through the library's own subscriber, which logs in as the same user", async () => {
    const holder = client({}, LOCK_USER);
    const waiter = client({}, LOCK_USER);
    await holder.getLock('contract:tls').lock({ leaseTime: 30_000 });
    const waiting = waiter.getLock('contract:tls').acquire({ waitTime: 25_000 });
    await eventually(() => waiter.diagnostics().waiters === 1, 10_000, 'the waiter parked');
    const subscribers = (await libraryConnections()).filter((row) => Number(row.sub) > 0);
    expect(subscribers.map((row) => row.user)).toEqual([LOCK_USER.username]);
    const releasedAt = performance.now();
    await holder.getLock('contract:tls').unlock();
    const handle = await waiting;
    // Well under the 30 s lease: the unlock message woke it.
    expect(performance.now() - releasedAt).toBeLessThan(5_000);
    await handle.release();
    expect(new Set((await libraryConnections()).map((row) => row.user))).toEqual(new Set([LOCK_USER.username]));
  });

  describe('the ioredisson command', () => {
    const CLI = join(ROOT, 'dist', 'cli.js');
    beforeAll(() => runOk('npm', ['run', 'build']), 120_000);
    const url = () => {
      const target = new URL(deployment().target);
      [target.username, target.password] = [LOCK_USER.username, LOCK_USER.password];
      return target.toString();
    };
    /** `NODE_EXTRA_CA_CERTS` would trust the test CA without `--ca`: these runs go without it. */
    const env = () => {
      const { NODE_EXTRA_CA_CERTS: _trusted, ...rest } = process.env;
      return rest;
    };
    const caFile = () => process.env.NODE_EXTRA_CA_CERTS!;

    it('takes a rediss:// URL and the CA file that signed the server', async () => {
      const holder = client({}, LOCK_USER);
      await holder.getLock('contract:cli').lock({ threadId: 7, leaseTime: 30_000 });
      // As an operator (the lock user may not run TYPE or SCAN, which the command reads with).
      const args = [CLI, '--url', deployment().target, '--ca', caFile(), 'inspect', 'contract:cli', '--json'];
      const result = await run(process.execPath, args, { env: env(), timeout: 60_000 });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(result.stdout)).toMatchObject({ name: 'contract:cli', kind: 'lock' });
      await holder.getLock('contract:cli').unlock({ threadId: 7 });
    });

    it('refuses a server whose certificate it cannot verify: exit 4, the password not shown', async () => {
      const result = await run(process.execPath, [CLI, '--url', url(), 'inspect', 'contract:cli'], {
        env: env(),
        timeout: 60_000,
      });
      expect(result.code).toBe(4);
      expect(result.stderr).toMatch(/cannot reach Redis at rediss:\/\/locker:\*\*\*@127\.0\.0\.1/);
      expect(result.stderr).not.toMatch(/locker-secret/);
    });

    it('refuses --ca without a rediss:// URL: exit 2', async () => {
      const plain = url().replace('rediss://', 'redis://');
      expect(
        (await run(process.execPath, [CLI, '--url', plain, '--ca', caFile(), 'inspect', 'x'], { env: env() })).code,
      ).toBe(2);
    });
  });
});
