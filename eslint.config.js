import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'data/',
      'node_modules/',
      'coverage/',
      'bench/.cache/',
      '.ci/cache/',
      'test-results/',
      'clients/typescript/dist/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      // each file is checked with the tsconfig that owns it (root, clients/typescript, console)
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Fastify plugins and hooks are async by its convention (a sync hook must call `done`)
      '@typescript-eslint/require-await': 'off',
      // String() of an unknown value is deliberate here: an error's reason, cells compared across dialects
      '@typescript-eslint/no-base-to-string': 'off',
      // a list in a message reads as its comma-joined items
      '@typescript-eslint/restrict-template-expressions': ['error', { allowArray: true, allowNumber: true }],
      // an AbortSignal's reason (typed any) is what an aborted wait rejects with, as fetch does
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true }],
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test runs the promise describe() and it() return; awaiting them changes nothing
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test'] },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    // a response body is `any` (inject's json()); the assertions are what check its shape
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['test/**/*.ts'],
    // node:path's functions, destructured from a dynamic import, use no `this`
    rules: { '@typescript-eslint/unbound-method': 'off' },
  },
  {
    files: ['src/mcp/tools.ts'],
    // a tool's arguments are checked against its REST twin's schema before `run` sees them
    rules: { '@typescript-eslint/no-unsafe-argument': 'off' },
  },
  {
    files: ['console/src/**/*.tsx'],
    // an async event handler reports its own failure (each catches and shows it)
    rules: {
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
    },
  },
  // plain JavaScript outside every tsconfig: the rules that need types do not apply
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  {
    files: ['demo/**/*.mjs', 'scripts/**/*.mjs', 'examples/**/*.mjs', 'console/*.mjs'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
      },
    },
  },
);
