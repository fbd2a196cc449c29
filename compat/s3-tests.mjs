#!/usr/bin/env node
/**
 * Runs ceph/s3-tests (the suite S3 servers measure themselves with) against a
 * Pail server it starts, and compares the result with what the compatibility
 * page says (compat/s3-tests.json). `../shared/s3-tests.md` says how the
 * suite is run and which tests are its "core".
 *
 *   node compat/s3-tests.mjs                 # run core, print the summary, fail if the page is no longer true
 *   node compat/s3-tests.mjs --write         # run core, rewrite docs/s3-compatibility.md from the result
 *   node compat/s3-tests.mjs --junit FILE    # read an earlier run's junit file instead of running the suite
 *   node compat/s3-tests.mjs -k EXPR         # only tests whose name matches (pytest -k), for working on one area
 *   node compat/s3-tests.mjs --feature lifecycle   # core and the tests of a feature area core leaves out (FEATURES); repeat for several
 *
 * Needs the built server (npm run build), Debian's Python with boto3 and the
 * suite's packages (/usr/bin/python3), and the suite at ../shared/s3-tests or
 * S3_TESTS_DIR. The suite's folder is only read: config and junit go to a
 * temporary folder.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { classify, parseJunit } from './s3-tests-results.mjs';
import { renderPage } from './s3-tests-page.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The suite: S3_TESTS_DIR, else the export beside the repository (../shared/s3-tests, as s3-tests.md places it). */
const SUITE = process.env.S3_TESTS_DIR ?? path.resolve(ROOT, '../shared/s3-tests');
const EXPLANATIONS = path.join(ROOT, 'compat/s3-tests.json');
const PAGE = path.join(ROOT, 'docs/s3-compatibility.md');
const PYTHON = '/usr/bin/python3';

/** The suite's keys act as an account's root does on S3: every permission, bypass-governance included (x-amz-bypass-governance-retention). */
const KEY_PERMISSIONS = ['read', 'write', 'delete', 'manage', 'bypass-governance'];

/** Markers and name fragments left out of "core" (../shared/s3-tests.md). */
const CORE_EXCLUDED_MARKERS =
  'versioning lifecycle lifecycle_expiration lifecycle_transition object_lock bucket_policy user_policy role_policy session_policy group_policy group bucket_encryption encryption sse_s3 tagging s3website s3website_routing_rules s3website_redirect_location s3select sns iam_account iam_cross_account iam_role iam_tenant iam_user test_of_sts webidentity_test token_claims_trust_policy_test token_principal_tag_role_policy_test token_request_tag_trust_policy_test token_resource_tags_test token_role_tags_test token_tag_keys_test abac_test storage_class bucket_logging bucket_logging_cleanup fails_without_logging_rollover cloud_transition cloud_restore appendobject auth_aws2 fails_on_aws object_ownership delete_marker target_by_bucket'.split(
    ' ',
  );
const CORE_EXCLUDED_NAMES =
  'acl object_lock versioning versioned block_public policy lifecycle tagging encryption sse logging ownership restore storage_class torrent website'.split(
    ' ',
  );

/**
 * Areas core leaves out that Pail now serves, run beside core on request: the
 * tests their markers select (`select`, a pytest -m expression) and the tests
 * whose names hold one of `names` (core leaves those out by name; many
 * versioning and object-lock tests carry no marker). A feature's test is left
 * out only when its markers say it needs what Pail lacks (bucket policies,
 * logging, storage-class transitions), never for another fragment of its name
 * ("acl", "policy"): those run, and fail with a reason. Each is counted apart
 * from core, as the area of compat/s3-tests.json whose `feature` names it.
 */
const FEATURES = {
  lifecycle: { select: 'lifecycle and not lifecycle_transition and not cloud_transition', names: ['lifecycle'] },
  // No test carries the versioning marker at this commit; the delete-marker tests (marker delete_marker) are versioning's, the one that expires markers is lifecycle's.
  versioning: { select: 'versioning or (delete_marker and not lifecycle)', names: ['versioning', 'versioned'] },
  // The tagging tests that also carry bucket_policy test policies conditioned on tags: Pail has no bucket policies.
  tagging: { select: 'tagging and not bucket_policy', names: ['tagging'] },
  object_lock: { select: 'object_lock', names: ['object_lock'] },
};

function parseArgs(argv) {
  const args = { write: false, junit: null, k: null, features: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--write') args.write = true;
    else if (arg === '--junit') args.junit = argv[++i];
    else if (arg === '-k') args.k = argv[++i];
    else if (arg === '--feature') {
      const feature = argv[++i];
      if (!(feature in FEATURES)) throw new Error(`unknown feature ${feature} (known: ${Object.keys(FEATURES).join(', ')})`);
      args.features.push(feature);
    } else throw new Error(`unknown argument ${arg}`);
  }
  return args;
}

function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
}

async function freePort() {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The real server entry point, as `npm start` runs it, with room for the suite's thousands of requests and buckets. */
async function startPail(dataDir) {
  const main = path.join(ROOT, 'packages/server/dist/main.js');
  if (!existsSync(main)) throw new Error('packages/server is not built: run `npm run build` first');
  const [port, s3Port] = [await freePort(), await freePort()];
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    S3_API_PORT: String(s3Port),
    LOG_LEVEL: 'warn',
    PLAN_FREE_STORAGE_BYTES: String(50 * 1024 ** 3),
    PLAN_FREE_RATE_LIMIT: '1000000',
    SIGNED_URL_RATE_LIMIT: '1000000',
    SIGNUP_RATE_LIMIT: '1000',
    MAX_BUCKETS_PER_USER: '100000',
    // s3-tests' lifecycle tests count a day as lc_debug_interval seconds (10 unless configured), as Ceph's
    // rgw_lc_debug_interval makes RGW do; the sweep runs every second so an expiry is seen within the suite's margins.
    LIFECYCLE_DAY_SECONDS: '10',
    LIFECYCLE_INTERVAL_SECONDS: '1',
  };
  const child = spawn(process.execPath, [main], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  for (let waited = 0; ; waited += 100) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode})`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (waited > 30_000) throw new Error('the server did not start within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, s3Port, stop: () => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', resolve), child.kill('SIGTERM')))) };
}

/** A user with an S3 credential, made as a person would: sign up, then a key. */
async function userWithKey(url, name) {
  const email = `${name}-${Date.now()}@s3-tests.example`;
  const signup = await fetch(`${url}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse battery' }),
  });
  if (signup.status !== 201) throw new Error(`sign-up answered ${signup.status}: ${await signup.text()}`);
  const cookie = signup.headers.get('set-cookie').split(';')[0];
  const me = (await signup.json()).data;
  const key = await fetch(`${url}/api/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ name, permissions: KEY_PERMISSIONS }),
  });
  if (key.status !== 201) throw new Error(`making a key answered ${key.status}: ${await key.text()}`);
  const { access_key_id, secret_access_key } = (await key.json()).data;
  return { name, email, id: String(me.user?.id ?? me.id), access_key_id, secret_access_key };
}

function config(s3Port, main, alt, tenant) {
  // An account's display name is its email: the Owner DisplayName Pail answers (listings, ACLs), which the suite compares with it.
  const section = (title, user, extra = '') =>
    `[${title}]\ndisplay_name = ${user.email}\nuser_id = ${user.id}\nemail = ${user.email}\naccess_key = ${user.access_key_id}\nsecret_key = ${user.secret_access_key}\n${extra}\n`;
  return [
    `[DEFAULT]\nhost = 127.0.0.1\nport = ${s3Port}\nis_secure = False\nssl_verify = False\n`,
    `[fixtures]\nbucket prefix = s3t-{random}-\n`,
    section('s3 main', main, 'api_name = default\n'),
    section('s3 alt', alt),
    section('s3 tenant', tenant, 'tenant = testx\n'),
    section('iam', main),
    section('iam root', main),
    section('iam alt root', alt),
  ].join('\n');
}

async function runSuite(work, k, features) {
  const pail = await startPail(path.join(work, 'data'));
  try {
    const [main, alt, tenant] = [await userWithKey(pail.url, 'main'), await userWithKey(pail.url, 'alt'), await userWithKey(pail.url, 'tenant')];
    const conf = path.join(work, 's3tests.conf');
    await writeFile(conf, config(pail.s3Port, main, alt, tenant));
    const junit = path.join(work, 'junit.xml');
    // Core, and beside it the Signature Version 2 tests (marked auth_aws2, which core leaves out), reported apart.
    const markers = [
      `(${CORE_EXCLUDED_MARKERS.map((marker) => `not ${marker}`).join(' and ')}) or auth_aws2`,
      ...features.map((feature) => `(${FEATURES[feature].select})`),
    ].join(' or ');
    // Core's names, or a requested feature's (whatever else its name holds: the markers above keep out what Pail lacks).
    const featureNames = features.flatMap((feature) => FEATURES[feature].names);
    const names = [[`(${CORE_EXCLUDED_NAMES.map((name) => `not ${name}`).join(' and ')})`, ...featureNames].join(' or '), ...(k ? [k] : [])]
      .map((expression) => `(${expression})`)
      .join(' and ');
    const args = ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 's3tests/functional/test_s3.py', 's3tests/functional/test_headers.py'];
    args.push('-m', markers, '-k', names, `--junitxml=${junit}`, '-o', 'junit_family=xunit1');
    // Pytest's own exit code says tests failed; the comparison below decides.
    await run(PYTHON, args, { cwd: SUITE, env: { ...process.env, S3TEST_CONF: conf, PYTHONDONTWRITEBYTECODE: '1' } });
    return await readFile(junit, 'utf8');
  } finally {
    await pail.stop();
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const work = await mkdtemp(path.join(os.tmpdir(), 'pail-s3-tests-'));
  try {
    const xml = args.junit ? await readFile(args.junit, 'utf8') : await runSuite(work, args.k, args.features);
    if (!args.junit) {
      // Kept for --junit, to re-check this run against edited explanations without running the suite again.
      const saved = path.join(os.tmpdir(), 'pail-s3-tests-last.xml');
      await writeFile(saved, xml);
      console.log(`junit: ${saved}`);
    }
    const results = parseJunit(xml);
    const explanations = JSON.parse(await readFile(EXPLANATIONS, 'utf8'));
    const verdict = classify(results, explanations, { partial: args.k !== null, features: args.features });
    for (const line of verdict.summary) console.log(line);
    if (args.write) {
      await writeFile(PAGE, renderPage(results, explanations));
      console.log(`wrote ${path.relative(ROOT, PAGE)}`);
    }
    if (verdict.problems.length > 0) {
      for (const problem of verdict.problems) console.error(`s3-tests: ${problem}`);
      process.exitCode = 1;
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
