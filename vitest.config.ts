import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { probeScaledBackends } from './packages/server/test/scale-out/reachable.js';

// Tests run against the TypeScript sources; workspace packages resolve to their
// built output (npm test builds first), except where aliased here.
//
// Two projects:
// - `embedded`: every test, on SQLite and files (no outside services).
// - `scaled`: the HTTP suites again, on PostgreSQL + Redis + S3 (s3rver), plus
//   the scale-out suites (two server processes sharing those backends). It runs
//   when PostgreSQL and Redis answer. When they do not, it is skipped with a
//   printed reason, unless CI is set: then a missing service fails the run.
//   PAIL_TEST_SCALED=0 skips it on purpose, =1 requires it like CI does.

/** Server and SDK suites that start HTTP servers: worth running on every backend. */
const HTTP_SUITES = ['packages/server/test/*.test.ts', 'packages/sdk/test/**/*.test.ts'];
/**
 * Suites the scaled project leaves to the embedded one: each is about the
 * embedded backend itself, or what it tests runs through no SQL, Redis or
 * blob store call that differs between the backends.
 */
const NOT_BACKEND_SPECIFIC = [
  // Runs the blob-store contract on both stores (files and an s3rver of its own) itself.
  'packages/server/test/blob-store.test.ts',
  // File modes of the local data directory: the embedded backend's files.
  'packages/server/test/file-modes.test.ts',
  // A full local disk under DATA_DIR: the embedded backend's files.
  'packages/server/test/disk-full.test.ts',
  // Server processes on the embedded backend: SIGKILL and restart on the same DATA_DIR, SIGTERM.
  'packages/server/test/process.test.ts',
  'packages/server/test/s3-crash.test.ts',
  'packages/server/test/s3-multipart-crash.test.ts',
  'packages/server/test/resumable-crash.test.ts',
  'packages/server/test/webhook-crash.test.ts',
  // The real S3 tools test the S3 door's wire format, the same code on either backend; what it reaches behind it the
  // SDK suites (s3-api, s3-operations, s3-multipart, s3-copy-conditional, s3-upload-part-copy) run on both.
  'packages/server/test/s3-tools.test.ts',
  'packages/server/test/s3-tools-large.test.ts',
  // restic and rclone against locked buckets: the same tools' wire format; the lock rules behind it run on both
  // backends in object-lock-doors.test.ts, s3-object-lock.test.ts and the SDK's object-lock suite.
  'packages/server/test/s3-backups.test.ts',
  // Sockets held, stalled and counted in front of every backend; the cut uploads they end are doors-rules.test.ts's on both.
  'packages/server/test/connections.test.ts',
  // SQLite's write machinery, and its prepared cap statements against Kysely's, on SQLite files.
  'packages/server/test/sqlite-writes.test.ts',
  'packages/server/test/holding-writes.test.ts',
  // A server process on the embedded backend; doors-rules.test.ts runs the same doors and cuts on both.
  'packages/server/test/cut-uploads.test.ts',
  // operationOf from a table of requests: no server, no backend.
  'packages/server/test/s3-operation-of.test.ts',
  // authorize() from a table of principals, actions and buckets: no server, no backend.
  'packages/server/test/authorize.test.ts',
  // AppError's stacks: no server, no backend.
  'packages/server/test/errors.test.ts',
  // The order multipart parts are read in, on streams and timers: no server, no backend.
  'packages/server/test/part-turns.test.ts',
  // Sealing S3 secrets and deriving SigV4 signing keys: no server, no backend.
  'packages/server/test/s3-credentials.test.ts',
  // scrypt's cost for new passwords: a hash, then a sign-up stored as that hash on either backend.
  'packages/server/test/passwords.test.ts',
  // The SDK's redirects against plain node:http servers: no Pail server.
  'packages/sdk/test/redirects.test.ts',
  // Chromium as the client of presigned POSTs and CORS; s3-browser-uploads.test.ts runs the same requests on both backends.
  'packages/server/test/s3-browser-uploads-chromium.test.ts',
];
/** Only meaningful on shared backends. */
const SCALED_ONLY = [
  'packages/server/test/scale-out/two-instances.test.ts',
  'packages/server/test/scale-out/redis-down.test.ts',
  'packages/server/test/scale-out/stores-down.test.ts',
  'packages/server/test/scale-out/s3-two-instances.test.ts',
  'packages/server/test/scale-out/resumable-two-instances.test.ts',
  'packages/server/test/scale-out/lifecycle-two-instances.test.ts',
  'packages/server/test/scale-out/webhooks-two-instances.test.ts',
  'packages/server/test/scale-out/versions-two-instances.test.ts',
];

const truthy = (value: string | undefined) => value !== undefined && /^(1|true|yes)$/i.test(value);

// Vitest may evaluate this file more than once per run; decide (and print) once.
const DECISION = 'PAIL_TEST_SCALED_DECIDED';

async function scaledProjectWanted(): Promise<boolean> {
  const earlier = process.env[DECISION];
  if (earlier !== undefined) return earlier === 'yes';
  const wanted = await decideScaled();
  process.env[DECISION] = wanted ? 'yes' : 'no';
  return wanted;
}

async function decideScaled(): Promise<boolean> {
  if (process.env.PAIL_TEST_SCALED !== undefined && !truthy(process.env.PAIL_TEST_SCALED)) {
    console.log('[pail] scaled suites (PostgreSQL + Redis + S3) skipped: PAIL_TEST_SCALED=' + process.env.PAIL_TEST_SCALED);
    return false;
  }
  const required = truthy(process.env.CI) || truthy(process.env.PAIL_TEST_SCALED);
  const problems = await probeScaledBackends();
  if (problems.length === 0) return true;
  if (required) {
    throw new Error(`[pail] the scaled suites are required (CI or PAIL_TEST_SCALED is set), but: ${problems.join('; ')}`);
  }
  for (const problem of problems) console.log(`[pail] scaled suites (PostgreSQL + Redis + S3) skipped: ${problem}`);
  return false;
}

export default defineConfig(async () => {
  const scaled = await scaledProjectWanted();
  return {
    test: {
      testTimeout: 30_000,
      hookTimeout: 60_000,
      pool: 'forks',
      // Vitest's default is one worker fewer than the cores: a single worker on
      // a 2-core machine. The suites mostly wait (servers, child processes,
      // Chromium, PostgreSQL), so two at a time halves `npm test` there
      // (measured: 609 s -> 279 s). VITEST_MAX_WORKERS overrides this.
      maxWorkers: Math.max(2, availableParallelism() - 1),
      // A worker runs test files one after another in one process, their
      // imports (Fastify, the AWS SDK, the sources) loaded once instead of
      // once a file. Each file still starts its own servers on their own data;
      // what a file changes in its process (process.env, listeners, timers) it
      // puts back in afterAll/afterEach.
      isolate: false,
      projects: [
        {
          extends: true,
          test: {
            name: 'embedded',
            include: ['packages/*/test/**/*.test.ts'],
            exclude: ['**/node_modules/**', ...SCALED_ONLY],
            env: { PAIL_TEST_BACKEND: 'embedded' },
          },
        },
        ...(scaled
          ? [
              {
                extends: true,
                test: {
                  name: 'scaled',
                  include: [...HTTP_SUITES, 'packages/server/test/scale-out/**/*.test.ts'],
                  exclude: ['**/node_modules/**', ...NOT_BACKEND_SPECIFIC],
                  env: { PAIL_TEST_BACKEND: 'scaled' },
                },
              },
            ]
          : []),
      ],
    },
  };
});
