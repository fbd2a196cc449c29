/**
 * Configuration: one parse of the environment at boot, validated, frozen and
 * passed down. Nothing else reads process.env. A bad value stops start-up with
 * a message that names the variable.
 */
import { DEFAULT_PLAN_LIMITS, PLANS, type Plan } from '@pail/shared';
import { isIP } from 'node:net';
import path from 'node:path';

export type DatabaseConfig = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

export type BlobConfig =
  | { kind: 'fs'; root: string }
  | {
      kind: 's3';
      endpoint: string | undefined;
      bucket: string;
      region: string;
      accessKeyId: string | undefined;
      secretAccessKey: string | undefined;
      forcePathStyle: boolean;
    };

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  publicUrl: string;
  database: DatabaseConfig;
  redisUrl: string | undefined;
  /** Prepended to every Redis key, so several deployments (or test runs) can share one Redis. */
  redisKeyPrefix: string;
  blob: BlobConfig;
  /** undefined: generated once and kept in DATA_DIR (see secrets.ts). */
  sessionSecret: string | undefined;
  plans: Record<Plan, { storageBytes: number; ratePerMinute: number }>;
  publicRateLimit: number;
  /** Client API (dashboard sessions) requests per user per window, whatever the plan. */
  clientRateLimit: number;
  /** Requests through signed urls (share links) per client IP per window: a budget of their own, never their owner's. */
  signedUrlRateLimit: number;
  /** Sign-ups per client IP per hour. */
  signupRateLimit: number;
  /** Live buckets one user may have. */
  maxBucketsPerUser: number;
  /** Live API keys one user may have. */
  maxKeysPerUser: number;
  /** Uploads (beyond the inline size) one user may have in flight at once; the default (64) lets two ordinary tools run at once. */
  maxUploadsPerUser: number;
  /** Login attempts per 15 minutes, per account and per client IP. */
  loginRateLimit: number;
  /**
   * RATE_LIMIT_WINDOW_SECONDS (default 60): the window of the per-user
   * (Developer API) and per-IP (public downloads) budgets. The plan limits are
   * "per minute"; a shorter window is for tests that watch a budget refill.
   */
  rateLimitWindowSeconds: number;
  maxFileBytes: number;
  signup: 'open' | 'closed';
  logLevel: string;
  /** Files up to this size keep their bytes in the metadata database (db/object-writes/). 0: none. */
  inlineMaxBytes: number;
  /** Objects up to this size are kept in the in-memory read cache. */
  cacheMaxObjectBytes: number;
  /** Total memory the read cache may hold. 0 turns it off. */
  cacheMaxBytes: number;
  /** Seconds an orphaned blob must be old before garbage collection removes it. */
  gcGraceSeconds: number;
  /** Seconds after which an unfinished S3 multipart upload is removed with its parts (S3's usual lifecycle: 7 days). */
  multipartExpirySeconds: number;
  /** A lifecycle rule's day in seconds: 86400; shorter only in tests (as Ceph's rgw_lc_debug_interval). */
  lifecycleDaySeconds: number;
  /** Seconds between two passes of the lifecycle sweep (domain/lifecycle-sweep.ts). */
  lifecycleIntervalSeconds: number;
  /**
   * Which X-Forwarded-For/-Proto to believe (client IPs for rate limits):
   * none, the nearest N hops, or those set by the listed proxy addresses.
   */
  trustProxy: false | number | string[];
  /** A connection with no bytes moving either way for this long is closed. */
  idleTimeoutSeconds: number;
  /** A request's headers must arrive within this long. */
  headersTimeoutSeconds: number;
  /** Requests in progress one client address may have (4 times as many sockets); 0: no cap (behind a proxy, every client is the proxy). */
  maxConnectionsPerIp: number;
  /** GET /metrics (Prometheus text) is served. */
  metrics: boolean;
  /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  /** Directory of the built dashboard; served at `/` when it exists. */
  dashboardDir: string | undefined;
  /** S3_API_PORT (default 9000): the S3-compatible API's own listener (src/s3/); null (`off`): none. */
  s3ApiPort: number | null;
  /** S3_API_REGION (default us-east-1): what GetBucketLocation answers; requests signed for any region are accepted. */
  s3ApiRegion: string;
  /** S3_API_DOMAIN (unset by default): `<bucket>.<domain>` Hosts name their bucket (virtual-hosted style); path style always works. */
  s3ApiDomain: string | null;
  /** S3_API_SIGNATURE_V2 (default on): Signature Version 2 (headers, presigned urls, POST policies) is accepted beside SigV4; `off`: SigV2 is 400. */
  s3ApiSignatureV2: boolean;
  /** Webhooks (issue 39): where they may point and how they are delivered. */
  webhooks: WebhookConfig;
}

export interface WebhookConfig {
  /** WEBHOOK_ALLOW_PRIVATE (default false): http urls and private, loopback or link-local addresses are allowed (tests, closed networks). */
  allowPrivate: boolean;
  /** WEBHOOK_TIMEOUT_MS (default 10000): one delivery attempt's time limit. */
  timeoutMs: number;
  /** WEBHOOK_RETRY_BASE_MS (default 5000): the first retry's delay, doubled after each failure (at most an hour). */
  retryBaseMs: number;
  /** WEBHOOK_RETRY_FOR_SECONDS (default 259200, 3 days): an endpoint failing this long is disabled. */
  retryForSeconds: number;
  /** WEBHOOK_POLL_MS (default 1000): how often an idle deliverer looks for pending deliveries. */
  pollMs: number;
  /** WEBHOOK_SECRET_OVERLAP_SECONDS (default 86400): how long a rotated-out secret keeps signing beside the new one. */
  secretOverlapSeconds: number;
  /** WEBHOOK_CONCURRENCY (default 8): endpoints one instance delivers to at once (each one delivery at a time). */
  concurrency: number;
  /** WEBHOOK_KEEP_DELIVERED_DAYS (default 30): how long a delivered event and its attempts stay listed before they are pruned. */
  keepDeliveredDays: number;
}

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got ${JSON.stringify(raw)}`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function oneOf<T extends string>(env: Env, name: string, choices: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(choices as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${choices.join(', ')}, got ${JSON.stringify(raw)}`);
  }
  return raw as T;
}

const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * A hop count or the proxies' addresses (IPs, CIDR ranges, or loopback /
 * linklocal / uniquelocal). Never "trust everything": then any client could
 * name its own address and so pick a fresh rate budget with every request.
 */
function trustedProxies(env: Env, name: string): false | number | string[] {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '' || /^(0|false|no|off)$/i.test(raw)) return false;
  if (/^\d+$/.test(raw)) return Number(raw);
  if (/^(true|yes|on)$/i.test(raw)) {
    throw new ConfigError(
      name,
      "must be a hop count (e.g. 1) or the proxies' addresses (e.g. 10.0.0.5,172.16.0.0/12), not true: trusting every hop lets any client choose its own address",
    );
  }
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address = '', prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    const prefixOk = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
    if (!PROXY_RANGE_NAMES.includes(entry) && (family === 0 || !prefixOk || rest.length > 0)) {
      throw new ConfigError(name, `must be a hop count or a comma-separated list of IP addresses or CIDR ranges, got ${JSON.stringify(entry)}`);
    }
  }
  return entries;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(name, `must be true or false, got ${JSON.stringify(raw)}`);
}

/** A port, or null when the variable says `off`. */
function portOrOff(env: Env, name: string, fallback: number): number | null {
  const raw = env[name]?.trim();
  if (raw !== undefined && /^(off|false|no|none)$/i.test(raw)) return null;
  return integer(env, name, fallback, 0, 65535);
}

/** A host name without a port, lower-cased (Host headers are compared case-insensitively). */
function s3Domain(env: Env, name: string): string | null {
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return null;
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(raw))
    throw new ConfigError(name, `must be a host name such as s3.example.com, got ${JSON.stringify(raw)}`);
  return raw;
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL, got ${JSON.stringify(raw)}`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
  }
  return raw;
}

export function loadConfig(env: Env = process.env, cwd = process.cwd()): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const dataDir = path.resolve(cwd, env.DATA_DIR || './data');
  const publicUrl = (url(env, 'PUBLIC_URL', ['http:', 'https:']) ?? `http://localhost:${port}`).replace(/\/+$/, '');

  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:', 'sqlite:', 'file:']);
  const database: DatabaseConfig =
    databaseUrl && /^postgres(ql)?:/.test(databaseUrl)
      ? { kind: 'postgres', url: databaseUrl }
      : { kind: 'sqlite', file: databaseUrl ? databaseUrl.replace(/^(sqlite|file):(\/\/)?/, '') : path.join(dataDir, 'pail.db') };

  const s3Endpoint = url(env, 'S3_ENDPOINT', ['http:', 'https:']);
  const s3Bucket = env.S3_BUCKET || undefined;
  if (s3Endpoint && !s3Bucket) throw new ConfigError('S3_BUCKET', 'must be set when S3_ENDPOINT is set');
  const blob: BlobConfig = s3Bucket
    ? {
        kind: 's3',
        endpoint: s3Endpoint,
        bucket: s3Bucket,
        region: env.S3_REGION || 'us-east-1',
        accessKeyId: env.S3_ACCESS_KEY_ID || undefined,
        secretAccessKey: env.S3_SECRET_ACCESS_KEY || undefined,
        forcePathStyle: boolean(env, 'S3_FORCE_PATH_STYLE', Boolean(s3Endpoint)),
      }
    : { kind: 'fs', root: path.join(dataDir, 'blobs') };

  const sessionSecret = env.SESSION_SECRET || undefined;
  if (sessionSecret !== undefined && sessionSecret.length < 32) {
    throw new ConfigError('SESSION_SECRET', 'must be at least 32 characters long');
  }

  const plans = {} as Config['plans'];
  for (const plan of PLANS) {
    const upper = plan.toUpperCase();
    plans[plan] = {
      storageBytes: integer(env, `PLAN_${upper}_STORAGE_BYTES`, DEFAULT_PLAN_LIMITS[plan].storageBytes),
      ratePerMinute: integer(env, `PLAN_${upper}_RATE_LIMIT`, DEFAULT_PLAN_LIMITS[plan].ratePerMinute, 1),
    };
  }

  const config: Config = {
    port,
    host: env.HOST || '0.0.0.0',
    dataDir,
    publicUrl,
    database,
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisKeyPrefix: env.REDIS_KEY_PREFIX ?? 'pail:',
    blob,
    sessionSecret,
    plans,
    publicRateLimit: integer(env, 'PUBLIC_RATE_LIMIT', 600, 1),
    clientRateLimit: integer(env, 'CLIENT_RATE_LIMIT', 600, 1),
    signedUrlRateLimit: integer(env, 'SIGNED_URL_RATE_LIMIT', 600, 1),
    signupRateLimit: integer(env, 'SIGNUP_RATE_LIMIT', 10, 1),
    maxBucketsPerUser: integer(env, 'MAX_BUCKETS_PER_USER', 100, 1),
    maxKeysPerUser: integer(env, 'MAX_KEYS_PER_USER', 100, 1),
    maxUploadsPerUser: integer(env, 'MAX_UPLOADS_PER_USER', 64, 1),
    loginRateLimit: integer(env, 'LOGIN_RATE_LIMIT', 10, 1),
    rateLimitWindowSeconds: integer(env, 'RATE_LIMIT_WINDOW_SECONDS', 60, 1, 3600),
    maxFileBytes: integer(env, 'MAX_FILE_BYTES', 5 * 1024 ** 3, 0),
    signup: oneOf(env, 'SIGNUP', ['open', 'closed'] as const, 'open'),
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    inlineMaxBytes: integer(env, 'INLINE_MAX_BYTES', 64 * 1024, 0, 1024 * 1024),
    cacheMaxObjectBytes: integer(env, 'CACHE_MAX_OBJECT_BYTES', 64 * 1024),
    cacheMaxBytes: integer(env, 'CACHE_MAX_BYTES', 64 * 1024 * 1024),
    gcGraceSeconds: integer(env, 'GC_GRACE_SECONDS', 3600),
    multipartExpirySeconds: integer(env, 'MULTIPART_EXPIRY_SECONDS', 7 * 24 * 3600, 1),
    lifecycleDaySeconds: integer(env, 'LIFECYCLE_DAY_SECONDS', 86400, 1),
    lifecycleIntervalSeconds: integer(env, 'LIFECYCLE_INTERVAL_SECONDS', 3600, 1),
    trustProxy: trustedProxies(env, 'TRUST_PROXY'),
    dashboardDir: env.DASHBOARD_DIR || undefined,
    idleTimeoutSeconds: integer(env, 'IDLE_TIMEOUT_SECONDS', 30, 1, 3600),
    headersTimeoutSeconds: integer(env, 'HEADERS_TIMEOUT_SECONDS', 20, 1, 3600),
    maxConnectionsPerIp: integer(env, 'MAX_CONNECTIONS_PER_IP', 100),
    metrics: boolean(env, 'METRICS', true),
    metricsToken: env.METRICS_TOKEN || undefined,
    s3ApiPort: portOrOff(env, 'S3_API_PORT', 9000),
    s3ApiRegion: env.S3_API_REGION || 'us-east-1',
    s3ApiDomain: s3Domain(env, 'S3_API_DOMAIN'),
    s3ApiSignatureV2: boolean(env, 'S3_API_SIGNATURE_V2', true),
    webhooks: {
      allowPrivate: boolean(env, 'WEBHOOK_ALLOW_PRIVATE', false),
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
      retryBaseMs: integer(env, 'WEBHOOK_RETRY_BASE_MS', 5_000, 1, 3_600_000),
      retryForSeconds: integer(env, 'WEBHOOK_RETRY_FOR_SECONDS', 3 * 24 * 3600, 1),
      pollMs: integer(env, 'WEBHOOK_POLL_MS', 1_000, 10, 60_000),
      secretOverlapSeconds: integer(env, 'WEBHOOK_SECRET_OVERLAP_SECONDS', 24 * 3600, 0),
      concurrency: integer(env, 'WEBHOOK_CONCURRENCY', 8, 1, 256),
      keepDeliveredDays: integer(env, 'WEBHOOK_KEEP_DELIVERED_DAYS', 30, 1, 3650),
    },
  };
  return Object.freeze(config);
}

/**
 * What a server process starts with: loadConfig, or the line naming the bad
 * variable and exit 2. `pail serve` passes the environment it was given, and
 * calls it before loading the server, so a bad value stops it at once.
 */
export function configOrExit(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Config {
  try {
    return loadConfig(env, cwd);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
}
