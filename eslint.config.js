// @ts-check
// One ESLint config for the whole tree. Formatting is Prettier's job
// (.prettierrc.json); eslint-config-prettier, last below, turns off every rule
// that would disagree with it. `npm run lint` runs both.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import { importX, createNodeResolver } from 'eslint-plugin-import-x';
import noCycleWithTypes from './eslint/no-cycle-with-types.js';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const TS_SOURCES = ['packages/*/src/**/*.{ts,tsx}'];
const TS_TESTS = ['packages/*/test/**/*.{ts,tsx}'];

/** Unused variables are errors, except names starting with `_` and the rest siblings of a destructuring. */
const UNUSED_VARS = {
  args: 'after-used',
  argsIgnorePattern: '^_',
  varsIgnorePattern: '^_',
  caughtErrorsIgnorePattern: '^_',
  destructuredArrayIgnorePattern: '^_',
  ignoreRestSiblings: true,
};

/** Imports that belong to the storage adapters, never to the domain. */
const STORAGE_ADAPTERS = [
  'better-sqlite3',
  'pg',
  'ioredis',
  '**/db/object-writes/sqlite*',
  '**/db/object-writes/postgres*',
  '**/db/sqlite-writer*',
  '**/db/keyed-batcher*',
  '**/keyed-batcher*',
];
/** Imports that belong to the HTTP layer. */
const HTTP_LAYER = ['fastify', 'fastify-plugin', '@fastify/*', '**/http/**'];

export default defineConfig(
  globalIgnores(['**/dist/', '**/node_modules/', 'bench/results/', '**/coverage/', 'test-artifacts/', 'data/']),
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },

  // Plain JavaScript (bench/*.mjs, bin scripts, examples, root config files): recommended rules, Node globals.
  {
    files: ['**/*.{js,mjs,cjs}'],
    extends: [js.configs.recommended],
    languageOptions: { ecmaVersion: 'latest', sourceType: 'module', globals: { ...globals.node } },
    rules: {
      'no-unused-vars': ['error', UNUSED_VARS],
    },
  },

  // TypeScript config files outside every tsconfig (vitest.config.ts, vite.config.ts): syntax-only TypeScript rules.
  {
    files: ['*.ts', 'packages/*/*.ts'],
    extends: [tseslint.configs.recommended],
    languageOptions: { globals: { ...globals.node } },
  },

  // TypeScript sources and tests: type-checked rules, each file typed by its nearest tsconfig.json
  // (packages/*/tsconfig.json for src, packages/*/test/tsconfig.json for tests).
  {
    files: [...TS_SOURCES, ...TS_TESTS],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.node },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports', fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', UNUSED_VARS],
      // Off: an async function without await is deliberate here. Fastify sends an async handler's return value (a sync
      // one must call reply.send), and `async` turns a throw into the rejection a Promise-returning interface expects.
      '@typescript-eslint/require-await': 'off',
    },
  },

  // Tests read HTTP bodies as untyped JSON (helpers/client.ts json(): Promise<any>) and check them with expect():
  // the assertions are the type check, so the no-unsafe-* family (which flags every use of such a body) is off there.
  {
    files: TS_TESTS,
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },

  // Small files: no source file (nor benchmark script) over 400 lines, counting every line, blank or comment. Tests may be longer.
  {
    files: [...TS_SOURCES, 'bench/*.mjs'],
    rules: { 'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }] },
  },

  // The dashboard runs in the browser and is React.
  {
    files: ['packages/dashboard/src/**/*.{ts,tsx}'],
    extends: [reactHooks.configs.flat['recommended-latest']],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      // useAsync(load, deps) takes its deps like useEffect: check them at every call site.
      'react-hooks/exhaustive-deps': ['error', { additionalHooks: '^useAsync$' }],
      // Off: the "latest callback" idiom (ref.current = prop during render, read in effects) is used on purpose
      // (use-async.ts, use-uploads.ts); this React Compiler rule forbids it, and the dashboard is not compiled by it.
      'react-hooks/refs': 'off',
      // Off: resetting state when an input changes, at the top of the effect that loads for it, is the dashboard's
      // loading idiom (use-async.ts, previews, pages); rewriting it is a behaviour change, not a lint fix.
      'react-hooks/set-state-in-effect': 'off',
    },
  },

  // Off: Kysely migrations take Kysely<any> by design (Kysely's docs): each runs on the schema of its own day, not today's types.
  { files: ['packages/server/src/db/migrations/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },

  // Server: no import cycles. The resolver maps the `.js` specifiers NodeNext requires onto the `.ts` sources.
  {
    files: ['packages/server/src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      // Without these two, import-x skips .ts files when it follows imports, and finds no cycle through them.
      'import-x/extensions': ['.ts', '.tsx', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/resolver-next': [
        createNodeResolver({ extensions: ['.ts', '.tsx', '.js', '.mjs', '.json', '.node'], extensionAlias: { '.js': ['.ts', '.js'] } }),
      ],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  // Nor through type-only imports, which import-x/no-cycle does not follow (eslint/no-cycle-with-types.js).
  {
    files: ['packages/server/src/**/*.ts'],
    plugins: { pail: noCycleWithTypes },
    rules: { 'pail/no-cycle-with-types': 'error' },
  },

  // Layering: domain knows neither storage adapters nor HTTP; blob stores know
  // nothing above them; db knows nothing of HTTP.
  {
    files: ['packages/server/src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: STORAGE_ADAPTERS, message: 'domain/ talks to storage through its ports, not through a storage adapter.' },
            { group: HTTP_LAYER, message: 'domain/ must not depend on the HTTP layer.' },
          ],
        },
      ],
    },
  },
  {
    files: ['packages/server/src/blob/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/db/**', '**/domain/**', '**/http/**'], message: 'blob/ is the bottom layer: it must not import db/, domain/ or http/.' }] },
      ],
    },
  },
  {
    files: ['packages/server/src/db/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/http/**', 'fastify'], message: 'db/ must not depend on the HTTP layer.' }] }],
    },
  },

  // The doors are siblings: the Pail API (api/), the S3 API (s3/) and tus (tus/) never import each other; what they
  // share (request context, authentication, bodies in and out, client errors, hooks, rate limits) is http/, below
  // all three, which imports none of them. app.ts and storage-apis.ts put the doors together.
  ...[
    ['api', ['s3', 'tus']],
    ['s3', ['api', 'tus']],
    ['tus', ['api', 's3']],
    ['http', ['api', 's3', 'tus']],
  ].map(([door, others]) => ({
    files: [`packages/server/src/${door}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: others.map((other) => `**/${other}/**`),
              message:
                door === 'http'
                  ? 'http/ is what the doors share: it imports none of them.'
                  : `${door}/ is a door: it imports no other door, only what they share (http/) and below.`,
            },
          ],
        },
      ],
    },
  })),
  // One S3 operation, one file (s3/README.md): the handlers never import each other, only the support modules beside them.
  // This replaces the door rule above for these files, so it repeats it.
  {
    files: ['packages/server/src/s3/handlers/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/api/**', '**/tus/**'], message: 's3/ is a door: it imports no other door, only what they share (http/) and below.' },
            {
              group: ['./*', '**/handlers/**', '**/handler-table.js'],
              message: 'A handler imports no other handler: what several share is a support module in s3/.',
            },
          ],
        },
      ],
    },
  },

  prettier,
);
