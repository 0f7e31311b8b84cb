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
);
