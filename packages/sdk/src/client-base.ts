/**
 * What every group of the client's calls shares: the options checked and the
 * transport they make. Pail (client.ts) is built on top of the groups that
 * have files of their own (file-history.ts), so no file grows past reading.
 */
import type { PailOptions } from './client-options.js';
import { Transport } from './transport.js';

export class ClientBase {
  protected readonly transport: Transport;

  constructor(options: PailOptions) {
    if (!options || typeof options.baseUrl !== 'string' || options.baseUrl === '') {
      throw new TypeError('new Pail({ baseUrl, apiKey }): baseUrl is required');
    }
    this.transport = new Transport(options);
  }
}
