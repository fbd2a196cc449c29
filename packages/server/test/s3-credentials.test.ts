/**
 * S3 credentials: a secret sealed under the server secret opens only there
 * and only for its own access key id, and the SigV4 signing key kept for a
 * scope is the one the AWS SDK's own signer derives.
 */
import { getSigningKey } from '@smithy/signature-v4';
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { S3CredentialSealer } from '../src/domain/s3-credentials.js';

const SCOPE = '20261127/us-east-1/s3/aws4_request';

/** The hash the SDK's signer is handed (an HMAC when given a key), on node:crypto. */
class Sha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: string | Uint8Array) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', secret);
  }
  update(data: string | Uint8Array): void {
    this.hash.update(data);
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }
}

async function sdkSigningKey(accessKeyId: string, secretAccessKey: string, scope: string): Promise<Buffer> {
  const [date = '', region = '', service = ''] = scope.split('/');
  // @aws-crypto's Sha256 also takes an ArrayBuffer secret, which the constructor type @smithy names does not list.
  const hash = Sha256 as unknown as Parameters<typeof getSigningKey>[0];
  return Buffer.from(await getSigningKey(hash, { accessKeyId, secretAccessKey }, date, region, service));
}

describe('S3CredentialSealer', () => {
  it("derives the signing key the AWS SDK's signer derives, for each scope, and answers with the one kept once it is kept", async () => {
    const sealer = new S3CredentialSealer('server secret one');
    const { accessKeyId, secretAccessKey, sealedSecret } = sealer.issue();
    for (const scope of [SCOPE, '20261128/us-east-1/s3/aws4_request', '20261127/eu-west-1/s3/aws4_request']) {
      const derived = sealer.signingKey(accessKeyId, sealedSecret, scope)!;
      expect(derived.equals(await sdkSigningKey(accessKeyId, secretAccessKey, scope))).toBe(true);
      sealer.keepSigningKey(accessKeyId, sealedSecret, scope, derived);
      expect(sealer.signingKey(accessKeyId, sealedSecret, scope)).toBe(derived);
    }
  });

  it('a secret sealed anew (as a rotated key would be) gets its own key, never one kept for the old secret', async () => {
    const sealer = new S3CredentialSealer('server secret one');
    const first = sealer.issue();
    sealer.keepSigningKey(first.accessKeyId, first.sealedSecret, SCOPE, sealer.signingKey(first.accessKeyId, first.sealedSecret, SCOPE)!);
    const rotated = sealer.seal(first.accessKeyId, 'another secret entirely');
    expect(sealer.signingKey(first.accessKeyId, rotated, SCOPE)?.equals(await sdkSigningKey(first.accessKeyId, 'another secret entirely', SCOPE))).toBe(true);
  });

  it('keeps nothing it was not told to keep: a key derived for a made-up scope is derived again next time', () => {
    const sealer = new S3CredentialSealer('server secret one');
    const { accessKeyId, sealedSecret } = sealer.issue();
    const once = sealer.signingKey(accessKeyId, sealedSecret, '20261127/made-up-region/s3/aws4_request');
    const again = sealer.signingKey(accessKeyId, sealedSecret, '20261127/made-up-region/s3/aws4_request');
    expect(again?.equals(once!)).toBe(true);
    expect(again).not.toBe(once);
  });

  it('opens nothing sealed under another server secret, for another access key id, or altered, and keeps nothing for it', () => {
    const mine = new S3CredentialSealer('server secret one');
    const theirs = new S3CredentialSealer('server secret two');
    const { accessKeyId, sealedSecret } = theirs.issue();
    expect(mine.signingKey(accessKeyId, sealedSecret, SCOPE)).toBeNull();
    expect(mine.signingKey(accessKeyId, sealedSecret, SCOPE)).toBeNull();
    const own = mine.issue();
    expect(mine.signingKey(accessKeyId, own.sealedSecret, SCOPE)).toBeNull();
    const altered = `${own.sealedSecret.slice(0, -2)}${own.sealedSecret.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(mine.signingKey(own.accessKeyId, altered, SCOPE)).toBeNull();
  });
});
