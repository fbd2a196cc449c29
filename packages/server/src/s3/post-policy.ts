/**
 * A browser form's signed POST policy (S3's POST Object): the signature is
 * the HMAC of the base64 policy with the SigV4 signing key of the
 * credential's scope (or SigV2's HMAC-SHA1 with the secret, sigv2.ts); the policy (JSON) has an expiration and the
 * conditions every form field must meet. Every field but the signature, the
 * policy, the file, x-amz-checksum-* and x-ignore-* must be named by a
 * condition, so that a form cannot add what its signer did not allow.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { CHECKSUM_ALGORITHMS } from './checksums.js';
import { S3Error, s3Errors } from './errors.js';
import { MAX_PRESIGNED_SECONDS, MAX_SKEW_MS } from './sigv4.js';

type Condition =
  | { kind: 'eq'; field: string; value: string; source: unknown }
  | { kind: 'starts-with'; field: string; prefix: string; source: unknown }
  | { kind: 'length'; min: number; max: number };

export interface PostPolicy {
  conditions: Condition[];
  /** content-length-range, when the policy has one. */
  length?: { min: number; max: number };
}

const invalidPolicy = (why: string) => new S3Error('InvalidPolicyDocument', 400, `Invalid Policy: ${why}`);
const conditionFailed = (source: unknown) => s3Errors.accessDenied(`Invalid according to Policy: Policy Condition failed: ${JSON.stringify(source)}`);

/** Whether `signature` (hex) is the HMAC-SHA256 of the base64 policy under the signing key of its credential's scope. */
export function policySignatureMatches(policyBase64: string, signature: string, signingKey: Buffer): boolean {
  if (!/^[0-9a-f]{64}$/.test(signature)) return false;
  const expected = createHmac('sha256', signingKey).update(policyBase64).digest();
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}

/**
 * The policy document, checked for shape and expiry against `now`. Like a
 * presigned url, a policy lives at most 7 days from the x-amz-date it was
 * signed at (`signedAt`), which may be ahead of now by the clock skew at most.
 */
export function parsePolicy(policyBase64: string, now: number, signedAt: number): PostPolicy {
  let document: unknown;
  try {
    document = JSON.parse(Buffer.from(policyBase64, 'base64').toString('utf8'));
  } catch {
    throw invalidPolicy('the policy is not base64-encoded JSON');
  }
  const { expiration, conditions } = (document ?? {}) as { expiration?: unknown; conditions?: unknown };
  const expires = typeof expiration === 'string' ? Date.parse(expiration) : NaN;
  if (Number.isNaN(expires)) throw invalidPolicy(`Invalid 'expiration' value: '${String(expiration)}'`);
  if (expires <= now) throw s3Errors.accessDenied('Invalid according to Policy: Policy expired.');
  if (expires - signedAt > MAX_PRESIGNED_SECONDS * 1000) {
    throw invalidPolicy(`Invalid 'expiration' value: '${String(expiration)}' is more than 7 days after x-amz-date`);
  }
  if (signedAt - now > MAX_SKEW_MS) throw s3Errors.notYetValid();
  if (!Array.isArray(conditions)) throw invalidPolicy("the policy needs a 'conditions' list");
  const parsed = conditions.flatMap(parseCondition);
  const length = parsed.find((condition) => condition.kind === 'length');
  return { conditions: parsed, ...(length ? { length: { min: length.min, max: length.max } } : {}) };
}

function parseCondition(source: unknown): Condition[] {
  if (Array.isArray(source)) {
    const [operator, name, value] = source as unknown[];
    const op = typeof operator === 'string' ? operator.toLowerCase() : '';
    if (op === 'content-length-range' && source.length === 3) {
      const [min, max] = [Number(name), Number(value)];
      if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min < 0 || max < min)
        throw invalidPolicy(`Invalid content-length-range: ${JSON.stringify(source)}`);
      return [{ kind: 'length', min, max }];
    }
    if ((op === 'eq' || op === 'starts-with') && source.length === 3 && typeof name === 'string' && name.startsWith('$') && typeof value === 'string') {
      const field = name.slice(1).toLowerCase();
      return [op === 'eq' ? { kind: 'eq', field, value, source } : { kind: 'starts-with', field, prefix: value, source }];
    }
    throw invalidPolicy(`Invalid condition: ${JSON.stringify(source)}`);
  }
  if (typeof source === 'object' && source !== null) {
    const entries = Object.entries(source);
    const [name, value] = entries[0] ?? [];
    if (entries.length !== 1 || name === undefined)
      throw invalidPolicy('Invalid Simple-Condition: Simple-Conditions must have exactly one property specified.');
    if (typeof value !== 'string') throw invalidPolicy(`Invalid condition: ${JSON.stringify(source)}`);
    return [{ kind: 'eq', field: name.toLowerCase(), value, source }];
  }
  throw invalidPolicy(`Invalid condition: ${JSON.stringify(source)}`);
}

/** Fields the policy need not name (S3's list: a SigV4 form's signature, or a SigV2 form's and its access key id). */
const UNCONDITIONED = new Set([
  'x-amz-signature',
  'signature',
  'awsaccesskeyid',
  'policy',
  'file',
  // A checksum field can only refuse bytes that do not match it (what is kept is true of them): it needs no condition, as ceph/s3-tests expects.
  ...Object.keys(CHECKSUM_ALGORITHMS).map((algorithm) => `x-amz-checksum-${algorithm}`),
]);

/**
 * Checks the form's fields (names lowercased; `key` with ${filename}
 * already substituted) against the conditions; `bucketMatches` says whether
 * a `bucket` condition names the bucket posted to (by name or storage name).
 */
export function checkConditions(policy: PostPolicy, fields: ReadonlyMap<string, string>, bucketMatches: (name: string) => boolean): void {
  const named = new Set<string>(['bucket']);
  for (const condition of policy.conditions) {
    if (condition.kind === 'length') continue;
    named.add(condition.field);
    if (condition.kind === 'eq') {
      const met = condition.field === 'bucket' ? bucketMatches(condition.value) : (fields.get(condition.field) ?? '') === condition.value;
      if (!met) throw conditionFailed(condition.source);
    } else {
      // A Content-Type may list several types; each must start with the prefix.
      const value = fields.get(condition.field) ?? '';
      const values = condition.field === 'content-type' ? value.split(',').map((part) => part.trim()) : [value];
      if (!values.every((part) => part.startsWith(condition.prefix))) throw conditionFailed(condition.source);
    }
  }
  const extra = [...fields.keys()].filter((name) => !UNCONDITIONED.has(name) && !name.startsWith('x-ignore-') && !named.has(name));
  if (extra.length > 0) throw s3Errors.accessDenied(`Invalid according to Policy: Extra input fields: ${extra.join(', ')}`);
}
