// ESLint flat config. TypeScript (lib/, spec/) is linted with type information; the JavaScript of
// bench/, examples/ and the spec fixtures with the plain JavaScript rules.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** What lib/kernel/ may not import: a kind, the client, the CLI, a kind's script. */
const KERNEL_NAMES_NO_KIND = {
  group: ['**/kinds', '**/kinds/**', '**/client', '**/cli/**', '**/lua/*/**', '!**/lua/includes/**'],
  message: "lib/kernel/ imports no kind, client or CLI module, and no kind's script.",
};
/** Cluster slots are the topology's business: ask lib/kernel/topology/ (slotOf, sameSlot, nodeOf). */
const ONLY_TOPOLOGY = {
  name: 'cluster-key-slot',
  message: 'Only lib/kernel/topology/ computes cluster slots; ask the Topology.',
};

export default tseslint.config(
  {
    // examples/*.ts are type-checked as a strict nodenext consumer by spec/packaging/examples.spec.ts.
    ignores: [
      'dist/',
      'docs/api/',
      'coverage/',
      'node_modules/',
      'spec/interop/redisson-peer/target/',
      'examples/*.ts',
    ],
  },
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },

  // JavaScript: ES modules (.mjs) and the CommonJS config and transform files (.js), all run by Node.
  {
    files: ['**/*.{js,mjs,cjs}'],
    ...js.configs.recommended,
    languageOptions: {
      ecmaVersion: 2024,
      globals: { ...globals.node },
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
  {
    files: ['**/*.{js,mjs,cjs}'],
    rules: {
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },

  // TypeScript, with the type-checked rule set (the type information comes from tsconfig.json).
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['tsup.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Promises: none dropped without a decision, none passed where a plain callback is expected.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      // `const { permits: _permits, ...rest } = options` drops a key on purpose.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // A caught error or an AbortSignal's reason (typed `any` by the DOM lib) is passed on unchanged:
      // callers get back exactly what they aborted with. Literals and other non-errors stay reported.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
    },
  },
  // The kernel names no kind: it drives the records kinds hand it, and never reaches into lib/kinds/,
  // the client or the CLI (DESIGN.md section 3). Only lib/kernel/topology/ knows cluster slots.
  {
    files: ['lib/**/*.ts'],
    ignores: ['lib/kernel/topology/**'],
    rules: {
      'no-restricted-imports': ['error', { paths: [ONLY_TOPOLOGY] }],
    },
  },
  {
    files: ['lib/kernel/**/*.ts'],
    ignores: ['lib/kernel/topology/**'],
    rules: {
      'no-restricted-imports': ['error', { paths: [ONLY_TOPOLOGY], patterns: [KERNEL_NAMES_NO_KIND] }],
    },
  },
  {
    files: ['lib/kernel/topology/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [KERNEL_NAMES_NO_KIND] }],
    },
  },
  // Tests read JSON of unknown shape (CLI reports, package.json of the tarball) and feed hostile input
  // on purpose; the promise rules and the rest of the type-checked set still apply to them.
  {
    files: ['spec/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
    },
  },
);
