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
  // @oclif/core's index loads every part of it (help, semver, the engine check) on every
  // start; the bundle leaves out what no subpath reaches (docs/performance.md, session 29).
  {
    files: ['src/**/*.ts'],
    rules: {'no-restricted-imports': ['error', {name: '@oclif/core', message: "import from @oclif/core's subpaths ('@oclif/core/command', '/flags', '/args', '/run', …): its index loads every part of it"}]},
  },
  // One test rig (docs/testing.md): the built CLI is started, temp dirs are made and
  // conditions are awaited only in test/support/ (cli.ts, tmp.ts, wait.ts), so every
  // test gets the scrubbed environment, the cleanup and the one deadline message.
  {
    files: ['test/**/*.ts'],
    ignores: ['test/support/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        ...['fs', 'node:fs', 'fs/promises', 'node:fs/promises'].map((name) => ({name, importNames: ['mkdtemp', 'mkdtempSync'], message: 'make temp dirs with makeTempDir/tempDir (test/support/tmp.ts): they are removed after the test'})),
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.name=/^(spawn|spawnSync|execFile|execFileSync|fork)$/][arguments.0.object.name='process'][arguments.0.property.name='execPath'][arguments.1.type='ArrayExpression'][arguments.1.elements.0.type='Identifier'][arguments.1.elements.0.name=/^(BIN|CLI|ENTRY|bin|cli|entry)$/]",
          message: 'start the built CLI through the rig: runCli/startCli (test/support/cli.ts) or helixProject().helix/start',
        },
        {
          selector: "CallExpression[callee.property.name=/^(join|resolve)$/]:has(> Literal[value='bin']) > Literal[value='run.js']",
          message: "the CLI's entry is test/support/cli.ts's BIN; start it with runCli/startCli",
        },
        {selector: "MemberExpression[property.name=/^mkdtemp(Sync)?$/]", message: 'make temp dirs with makeTempDir/tempDir (test/support/tmp.ts)'},
        {selector: "CallExpression[callee.name='setInterval']", message: 'poll with waitFor (test/support/wait.ts), never a local interval'},
        {
          selector: ':matches(WhileStatement, DoWhileStatement, ForStatement) > :matches(BinaryExpression, LogicalExpression, UnaryExpression).test CallExpression[callee.object.name="Date"][callee.property.name="now"]',
          message: 'a hand-written wait loop: use waitFor (test/support/wait.ts), which has the deadline and the message',
        },
        {
          selector: ':matches(WhileStatement, DoWhileStatement, ForStatement) > BlockStatement IfStatement > BinaryExpression.test CallExpression[callee.object.name="Date"][callee.property.name="now"]',
          message: 'a hand-written wait loop: use waitFor (test/support/wait.ts), which has the deadline and the message',
        },
      ],
    },
  },
  {
    files: ['scripts/**/*.mjs', 'bin/*.js', 'eslint.config.js'],
    languageOptions: {globals: {process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly'}},
    rules: {
      'no-unused-vars': ['error', {caughtErrors: 'none'}],
      'no-empty': ['error', {allowEmptyCatch: false}],
    },
  },
)
