import { defineConfig } from 'tsup';

// Scripts in lua/ are inlined as strings so the bundle needs no file-system access at run time.
export default defineConfig([
  {
    entry: ['lib/index.ts'],
    format: ['cjs', 'esm'],
    // Internals (marked @internal) stay out of the published types: only what index.ts exports.
    dts: { compilerOptions: { stripInternal: true } },
    clean: true,
    sourcemap: true,
    target: 'node20',
    loader: { '.lua': 'text' },
  },
  {
    // `ioredisson/otel`: apart from the core entry, so that only it imports @opentelemetry/api (an
    // optional peer dependency, left external) and the core bundle stays as it is.
    entry: { otel: 'lib/otel.ts' },
    format: ['cjs', 'esm'],
    dts: { compilerOptions: { stripInternal: true } },
    clean: false,
    sourcemap: true,
    target: 'node20',
  },
  {
    // The `ioredisson` command (package.json `bin`): one CommonJS file, its shebang kept from the source.
    entry: { cli: 'lib/cli/main.ts' },
    format: ['cjs'],
    clean: false,
    sourcemap: true,
    target: 'node20',
    loader: { '.lua': 'text' },
  },
]);
