/**
 * Signature V4 in the Authorization header for load.mjs's S3 PUTs (W4 s3),
 * one fresh signature per request: each request names its own key, and a
 * signature is good for 15 minutes only. The payload is signed (its hex
 * SHA-256 in x-amz-content-sha256, so the server hashes the body to check
 * it), and the headers signed are those the AWS SDK signs for a PutObject
 * of a Buffer: content-length, content-type, host, x-amz-content-sha256,
 * x-amz-date. @smithy/signature-v4 signs asynchronously, and autocannon
 * builds each request synchronously, so the canonical request is written
 * out here with node:crypto; the server checks every one of them.
 */
import { createHash, createHmac } from 'node:crypto';

const hmac = (key, text) => createHmac('sha256', key).update(text).digest();
const sha256Hex = (bytes) => createHash('sha256').update(bytes).digest('hex');
const encodeSegment = (text) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * A function (path, headers) -> headers with x-amz-date, x-amz-content-sha256
 * and authorization added for a PUT of `body` to `host`. The signing key is
 * derived once per day, the date formatted once per second.
 */
export function headerSigner({ accessKeyId, secretAccessKey, region = 'us-east-1' }, host, body) {
  const payloadHash = sha256Hex(body);
  const signedHeaders = 'content-length;content-type;host;x-amz-content-sha256;x-amz-date';
  let second = -1;
  let amzDate = '';
  let scope = '';
  let signingKey = null;
  let day = '';
  return (path, headers) => {
    const now = Math.floor(Date.now() / 1000);
    if (now !== second) {
      second = now;
      amzDate = new Date(now * 1000)
        .toISOString()
        .replace(/[-:]/g, '')
        .replace(/\.\d{3}/, '');
      if (amzDate.slice(0, 8) !== day) {
        day = amzDate.slice(0, 8);
        scope = `${day}/${region}/s3/aws4_request`;
        signingKey = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, day), region), 's3'), 'aws4_request');
      }
    }
    const canonicalPath = path
      .split('/')
      .map((segment) => encodeSegment(decodeURIComponent(segment)))
      .join('/');
    const canonical = [
      'PUT',
      canonicalPath,
      '',
      `content-length:${body.length}`,
      `content-type:${headers['content-type']}`,
      `host:${host}`,
      `x-amz-content-sha256:${payloadHash}`,
      `x-amz-date:${amzDate}`,
      '',
      signedHeaders,
      payloadHash,
    ].join('\n');
    const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonical)].join('\n');
    const signature = createHmac('sha256', signingKey).update(stringToSign).digest('hex');
    return {
      ...headers,
      host,
      'x-amz-date': amzDate,
      'x-amz-content-sha256': payloadHash,
      authorization: `AWS4-HMAC-SHA256 Credential=${accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
    };
  };
}
