/** Raw S3 requests signed as the AWS SDK signs them (@smithy/signature-v4), for what the SDK itself would not send. */
import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import type { S3Key } from './s3-client.js';

const bytes = (data: string | ArrayBuffer | ArrayBufferView): Buffer =>
  typeof data === 'string' ? Buffer.from(data) : ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.from(data);

/** The hash @smithy/signature-v4 signs with, from node:crypto. */
class NodeSha256 {
  private hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }
  reset(): void {}
}

/** Headers signed for `method path?query` on the S3 API at `s3Url`, with an unsigned payload. */
export async function signRequest(
  s3Url: string,
  key: S3Key,
  method: string,
  path: string,
  query: Record<string, string> = {},
  headers: Record<string, string> = {},
): Promise<Record<string, string>> {
  const url = new URL(`${s3Url}${path}`);
  const signer = new SignatureV4({
    credentials: { accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey },
    region: 'us-east-1',
    service: 's3',
    sha256: NodeSha256,
  });
  const signed = await signer.sign({
    method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname,
    query,
    headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...headers },
  });
  return signed.headers;
}
