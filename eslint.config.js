// Lint: type-aware typescript-eslint rules that catch real bugs (issue 13).
// Only the rules named in the issue are on; style is left to the authors.
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {ignores: ['dist/**', 'node_modules/**', 'fixtures/**', 'coverage/**', '.ci/**', 'oclif.manifest.json']},
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'vitest.config.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: {project: './tsconfig.check.json', tsconfigRootDir: import.meta.dirname},
    },
    plugins: {'@typescript-eslint': tseslint.plugin},
    linterOptions: {reportUnusedDisableDirectives: 'error'},
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', {considerDefaultExhaustiveForUnions: true}],
      '@typescript-eslint/no-unused-vars': ['error', {argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true}],
      // A catch with a comment inside passes (the comment says why the error is dropped);
      // a silent `catch {}` does not.
      'no-empty': ['error', {allowEmptyCatch: false}],
      'no-control-regex': 'error',
    },
  },
  // Tests feed control characters on purpose.
  {files: ['test/**/*.ts'], rules: {'no-control-regex': 'off'}},
  {
    files: ['scripts/**/*.mjs', 'bin/*.js', 'eslint.config.js'],
    languageOptions: {globals: {process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly'}},
    rules: {
      'no-unused-vars': ['error', {caughtErrors: 'none'}],
      'no-empty': ['error', {allowEmptyCatch: false}],
    },
  },
)
