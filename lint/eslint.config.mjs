// Type-aware lint of every TypeScript source and test: the promise rules matter most here, since an
// unhandled rejection in a DNS server is a crash in production (Node exits on one).
import tseslint from 'typescript-eslint';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/bundle/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  {
    files: ['packages/*/src/**/*.ts', 'packages/*/test/**/*.ts', 'fuzz/src/**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      // One program for every file (lint/tsconfig.json): built once, not once per package.
      parserOptions: { project: ['lint/tsconfig.json'], tsconfigRootDir: root },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // node:test's test()/describe() return promises the runner itself awaits
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] }] },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Node defines these two globals as accessors: in optimised code each use is a global load IC
    // and a getter call (about 5 ns), where an import is a plain property load. Per query that was ~1% of
    // kube-dns's CPU (docs/hot-path.md); the rule keeps every package the same.
    files: ['packages/*/src/**/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'Buffer', message: "import { Buffer } from 'node:buffer' (the global is a getter)" },
        { name: 'performance', message: "import { performance } from 'node:perf_hooks' (the global is a getter)" },
      ],
    },
  },
);
