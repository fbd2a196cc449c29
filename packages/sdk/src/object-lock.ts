/** Object lock requests (decisions.md, "Object lock"): a file version's retention and legal hold. */
import type { RetentionMode, SetLegalHold, SetRetention } from '@pail/shared';
import type { BucketId, CallOptions } from './call-options.js';
import { encodeFilename } from './file-paths.js';
import { bucketSegment } from './request-paths.js';
import type { RequestSpec } from './transport.js';

export interface RetentionOptions extends CallOptions {
  /** The version; absent: the file's current one. */
  versionId?: string;
  /** Shorten or remove a GOVERNANCE retention (a key with the bypass-governance permission). */
  bypassGovernance?: boolean;
}

/** A retention to set: its mode and until when. */
export interface RetentionInput {
  mode: RetentionMode;
  retainUntil: Date | string;
}

/** `retention` null removes a GOVERNANCE one (with bypassGovernance); a COMPLIANCE one can only be extended. */
export function retentionRequest(id: BucketId, filename: string, retention: RetentionInput | null, options: RetentionOptions): RequestSpec {
  const { versionId, bypassGovernance, ...call } = options;
  const until = retention === null ? null : typeof retention.retainUntil === 'string' ? retention.retainUntil : retention.retainUntil.toISOString();
  const json: SetRetention = { mode: retention?.mode ?? null, retain_until: until, ...(bypassGovernance ? { bypass_governance: true } : {}) };
  return { method: 'PUT', path: `/${bucketSegment(id)}/retention/${encodeFilename(filename)}`, query: { version_id: versionId }, json, ...call };
}

export function legalHoldRequest(id: BucketId, filename: string, on: boolean, options: CallOptions & { versionId?: string }): RequestSpec {
  const { versionId, ...call } = options;
  const json: SetLegalHold = { legal_hold: on };
  return { method: 'PUT', path: `/${bucketSegment(id)}/legal-hold/${encodeFilename(filename)}`, query: { version_id: versionId }, json, ...call };
}
