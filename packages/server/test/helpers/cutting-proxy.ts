/**
 * A TCP proxy that cuts connections: each connection it accepts takes the
 * next cut point from a queue (none: it passes everything), forwards that many
 * of the client's bytes to the server, then destroys both sides, as a client
 * whose network drops mid-request does.
 */
import { connect, createServer, type Server } from 'node:net';
import { openSockets } from './tcp-proxy.js';

export interface CuttingProxy {
  url: string;
  /** The next connection is cut once the client has sent `bytes` bytes. */
  cutNextAfter(bytes: number): void;
  /** Forgets cut points no connection took. */
  clear(): void;
  close(): Promise<void>;
}

export async function cuttingProxy(target: { host: string; port: number }): Promise<CuttingProxy> {
  const cuts: number[] = [];
  const { sockets, track } = openSockets();
  const server: Server = createServer((client) => {
    track(client);
    const upstream = connect(target);
    track(upstream);
    let budget = cuts.shift() ?? Infinity;
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      if (chunk.length < budget) {
        budget -= chunk.length;
        upstream.write(chunk);
        return;
      }
      if (budget > 0) upstream.write(chunk.subarray(0, budget));
      budget = 0;
      // Let the last bytes leave before the cut, as a dropped network would have sent them.
      setImmediate(cut);
    });
    upstream.pipe(client);
    client.on('end', () => upstream.end());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    cutNextAfter: (bytes) => cuts.push(bytes),
    clear: () => {
      cuts.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
