/**
 * Slow and greedy clients. A connection on which no byte has moved either way
 * for IDLE_TIMEOUT_SECONDS is closed, so a client that stops mid-request
 * cannot hold its socket and buffers for ever, while an upload or download
 * whose bytes keep moving is never cut. (Late headers are cut by the server's
 * headersTimeout, set in app.ts.)
 *
 * One client address (request.ip: behind a proxy, the address TRUST_PROXY
 * resolves) may have at most MAX_CONNECTIONS_PER_IP requests in progress, as
 * nginx's limit_conn counts: one more is answered `503` with Retry-After in the
 * listener's own format (Pail's JSON, S3's SlowDown), never reset. Idle
 * keep-alive sockets are not counted, so a client's pool of them never meets
 * the cap. An address's sockets of any kind are held to a ceiling far above
 * it (SOCKETS_PER_REQUEST times): a new one past the ceiling closes the
 * address's longest-idle socket that has no request in progress, so hundreds
 * of stalled sockets from one place cannot pile up.
 *
 * Idleness is found by a sweep over the open sockets that compares their byte
 * counts, not by a socket timeout, which is re-armed on every read and write
 * (docs/performance.md).
 */
import fp from 'fastify-plugin';
import type { Socket } from 'node:net';
import { errors } from '../../domain/errors.js';
import type { AppContext } from '../context.js';
import type { Scope } from '../route.js';

/** How many sockets an address may hold per request it may have in progress. */
export const SOCKETS_PER_REQUEST = 4;

interface Seen {
  moved: number;
  since: number;
  /** Requests in progress on the socket (more than one when pipelined). */
  busy: number;
}

interface Address {
  sockets: Set<Socket>;
}

export const connectionLimits = fp(
  async (app: Scope, ctx: AppContext) => {
    const cap = ctx.config.maxConnectionsPerIp;
    const ceiling = cap * SOCKETS_PER_REQUEST;
    const idleMs = ctx.config.idleTimeoutSeconds * 1000;
    /** Sockets by the peer that opened them (a proxy's, behind one). */
    const addresses = new Map<string, Address>();
    const sockets = new Map<Socket, Seen>();
    /** Requests in progress by client address: request.ip, which TRUST_PROXY resolves, so clients behind one proxy are told apart. */
    const busy = new Map<string, number>();

    const addressOf = (name: string): Address => {
      let found = addresses.get(name);
      if (!found) addresses.set(name, (found = { sockets: new Set() }));
      return found;
    };

    app.server.on('connection', (socket: Socket) => {
      const name = socket.remoteAddress ?? '';
      const address = addressOf(name);
      if (cap > 0 && address.sockets.size >= ceiling) closeLongestIdle(address, sockets);
      address.sockets.add(socket);
      sockets.set(socket, { moved: 0, since: Date.now(), busy: 0 });
      socket.once('close', () => {
        sockets.delete(socket);
        address.sockets.delete(socket);
        if (address.sockets.size === 0) addresses.delete(name);
      });
    });

    if (cap > 0) {
      // The first hook a request meets here: a refusal costs no lookup, and is rendered by the listener's error handler.
      app.addHook('onRequest', (request, reply, done) => {
        const socket = request.raw.socket;
        const client = request.ip;
        const inProgress = busy.get(client) ?? 0;
        if (inProgress >= cap) return done(errors.tooManyInProgress(cap));
        busy.set(client, inProgress + 1);
        const seen = sockets.get(socket);
        if (seen) {
          seen.busy++;
          seen.since = Date.now();
        }
        reply.raw.once('close', () => {
          const left = (busy.get(client) ?? 1) - 1;
          if (left === 0) busy.delete(client);
          else busy.set(client, left);
          if (seen) {
            seen.busy--;
            seen.since = Date.now();
          }
        });
        done();
      });
    }

    const sweep = setInterval(
      () => {
        const now = Date.now();
        for (const [socket, seen] of sockets) {
          const moved = socket.bytesRead + socket.bytesWritten;
          if (moved !== seen.moved) {
            seen.moved = moved;
            seen.since = now;
          } else if (now - seen.since >= idleMs) {
            socket.destroy();
          }
        }
      },
      Math.min(1000, idleMs / 4),
    );
    sweep.unref();
    app.addHook('onClose', async () => clearInterval(sweep));
  },
  { name: 'pail-connection-limits' },
);

/** Closes the address's socket that has been idle longest with no request in progress (a stalled or unused one). */
function closeLongestIdle(address: Address, sockets: Map<Socket, Seen>): void {
  let oldest: Socket | undefined;
  let oldestSince = Infinity;
  for (const socket of address.sockets) {
    const seen = sockets.get(socket);
    if (seen && seen.busy === 0 && seen.since < oldestSince) {
      oldest = socket;
      oldestSince = seen.since;
    }
  }
  oldest?.destroy();
}
