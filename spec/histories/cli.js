// `npm run test:histories -- --seed S --ops N [--families a,b] [--faults x,y] [--clients N] [--owners N]`: the history check
// with a seed and a budget of its own, passed to spec/histories/histories.spec.ts through the environment.
const { spawnSync } = require('node:child_process');

const env = { ...process.env };
const names = { '--seed': 'HISTORY_SEED', '--ops': 'HISTORY_OPS', '--families': 'HISTORY_FAMILIES', '--faults': 'HISTORY_FAULTS', '--history': 'HISTORY_FILE', '--clients': 'HISTORY_CLIENTS', '--owners': 'HISTORY_OWNERS' };
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i += 2) {
  const name = names[args[i]];
  if (!name || args[i + 1] === undefined) {
    console.error(`usage: npm run test:histories -- [--seed S] [--ops N] [--families ${'a,b'}] [--faults x,y] [--clients N] [--owners N] [--history FILE]; got ${args[i]}`);
    process.exit(2);
  }
  env[name] = args[i + 1];
}
const jest = require.resolve('jest/bin/jest');
const result = spawnSync(process.execPath, [jest, '-c', 'jest.histories.config.js', '--runInBand'], { stdio: 'inherit', env });
process.exit(result.status ?? 1);
