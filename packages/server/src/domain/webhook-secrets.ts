/**
 * A webhook's signing secret as the database keeps it: the prefix the API
 * shows (`whsec_` and four characters), then the whole secret sealed
 * (secret-sealer.ts) and bound to its bucket, so a copy of the database
 * cannot sign deliveries its receivers would trust. A secret stored before
 * secrets were sealed (the whole `whsec_…` alone) is read as it is.
 */
import { LRUCache } from 'lru-cache';
import { SecretSealer } from './secret-sealer.js';

/** Opened secrets kept, by stored value: the deliverer signs every message, and opening one costs a decipher. */
const OPENED_KEPT = 1024;

/** What the API shows of a secret (secret_prefix): the stored value starts with it too. */
export const SHOWN_PREFIX_LENGTH = 10;

export class WebhookSecrets {
  private readonly sealer: SecretSealer;
  private readonly opens = new LRUCache<string, { secret: string | null }>({ max: OPENED_KEPT });

  /** `serverSecret` is the server secret shared by every instance. */
  constructor(serverSecret: string) {
    this.sealer = new SecretSealer(serverSecret, 'pail webhook secrets v1');
  }

  /** The value to store for a bucket's webhook secret. */
  stored(bucketId: number, secret: string): string {
    return `${secret.slice(0, SHOWN_PREFIX_LENGTH)}:${this.sealer.seal(`bucket:${bucketId}`, secret)}`;
  }

  /** The secret a stored value holds, or null when it does not open (sealed under another server secret, or altered). */
  opened(bucketId: number, stored: string): string | null {
    const at = stored.indexOf(':');
    // A secret is base64 after `whsec_`: a ':' only ever follows the shown prefix of a sealed one.
    if (at === -1) return stored;
    // A stored value is bound to its bucket: the same value under another bucket opens (or not) on its own.
    const key = `${bucketId}:${stored}`;
    let opened = this.opens.get(key);
    if (!opened) {
      opened = { secret: this.sealer.open(`bucket:${bucketId}`, stored.slice(at + 1)) };
      this.opens.set(key, opened);
    }
    return opened.secret;
  }
}
