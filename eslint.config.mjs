// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import loopx from './scripts/lint/subsystem-imports.mjs';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'out/**', 'test-results/**', 'bench/results.json'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        __dirname: 'readonly',
        require: 'readonly',
        module: 'writable',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      // Control characters in our regexes are deliberate: they are what we refuse or strip.
      'no-control-regex': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    languageOptions: {
      globals: { URLSearchParams: 'readonly', fetch: 'readonly', AbortController: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The core is pure: no editor API, no console, no process exit (docs/ARCHITECTURE.md, "Layers").
    files: ['src/core/**/*.ts'],
    rules: {
      'no-console': 'error',
      'no-restricted-imports': [
        'error',
        { paths: ['vscode'], patterns: ['../cli/*', '../server/*', '../extension/*'] },
      ],
      'no-restricted-properties': ['error', { object: 'process', property: 'exit' }],
    },
  },
  {
    // The folder tree is the architecture: a core subsystem is imported through its index.ts.
    files: ['src/**/*.ts', 'webview/**/*.ts'],
    plugins: { loopx },
    rules: { 'loopx/subsystem-imports': 'error' },
  },
);
