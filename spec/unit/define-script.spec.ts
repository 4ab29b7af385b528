import { createHash } from 'node:crypto';
import { INCLUDES } from '../../lib/kernel/scripts/includes';
import { defineScript } from '../../lib/kernel/scripts/runner';

describe('defineScript', () => {
  it('replaces an include line by the shared Lua, and hashes the result', () => {
    const script = defineScript('t/x', '-- header\n--- @include "purge-expired-heads"\nreturn 1\n');
    expect(script.source).toContain(INCLUDES['purge-expired-heads']!.trimEnd());
    expect(script.source).not.toMatch(/^--- @include/m);
    expect(script.sha).toBe(createHash('sha1').update(script.source).digest('hex'));
  });

  it('refuses an unknown include', () => {
    expect(() => defineScript('t/y', '--- @include "nothing-here"\n')).toThrow(/includes unknown Lua "nothing-here"/);
  });
});
