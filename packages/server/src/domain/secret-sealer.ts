/**
 * Secrets the server must read again (an S3 credential's secret, a
 * webhook's signing secret) are kept in the database sealed, not as they
 * are: AES-256-GCM under a key derived from the server secret shared by
 * every instance, one key per purpose, bound to what the secret belongs to
 * (associated data), so a copy of the database alone signs nothing and a
 * sealed secret moved onto another row does not open.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

const SEALED_VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretSealer {
  private readonly key: Buffer;

  /** `serverSecret` is the server secret every instance shares; `purpose` names what this sealer keeps (its own key). */
  constructor(serverSecret: string, purpose: string) {
    this.key = createHmac('sha256', serverSecret).update(purpose).digest();
  }

  /** `v1.<base64url of iv, tag and sealed text>`, opened only with the same `boundTo`. */
  seal(boundTo: string, secret: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(boundTo, 'utf8'));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `${SEALED_VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url')}`;
  }

  /** The secret, or null when the sealed text is not this sealer's (another server secret or purpose, another row, or altered). */
  open(boundTo: string, sealedSecret: string): string | null {
    const [version, body] = sealedSecret.split('.');
    if (version !== SEALED_VERSION || body === undefined) return null;
    const bytes = Buffer.from(body, 'base64url');
    if (bytes.length <= IV_BYTES + TAG_BYTES) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(boundTo, 'utf8'));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
