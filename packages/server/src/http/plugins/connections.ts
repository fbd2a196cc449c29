/**
 * Slow and greedy clients. A connection on which no byte has moved either way
 * for IDLE_TIMEOUT_SECONDS is closed, so a client that stops mid-request
 * cannot hold its socket and buffers for ever, while an upload or download
 * whose bytes keep moving is never cut. (Late headers are cut by the server's
 * headersTimeout, set in app.ts.)
 *
 * One client address may have at most MAX_CONNECTIONS_PER_IP requests in
 * progress, as nginx's limit_conn counts (a socket's pipelined requests count
 * as the one being answered; behind a proxy, requests are counted by the
 * address TRUST_PROXY resolves): one more is answered `503` with Retry-After in the
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
}

/** A response is in progress on the socket (Node's own record of it, cleared when the response ends; pipelined requests wait behind it). */
const answering = (socket: Socket): boolean => (socket as Socket & { _httpMessage?: unknown })._httpMessage != null;

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
      sockets.set(socket, { moved: 0, since: Date.now() });
      socket.once('close', () => {
        sockets.delete(socket);
        address.sockets.delete(socket);
        if (address.sockets.size === 0) addresses.delete(name);
      });
    });

    if (cap > 0 && ctx.config.trustProxy === false) {
      // The first hook a request meets here: a refusal costs no lookup, and is rendered by the listener's error handler.
      app.addHook('onRequest', (request, _reply, done) => {
        const address = addresses.get(request.raw.socket.remoteAddress ?? '');
        // One request is answered at a time per socket: an address with no more sockets than the cap cannot be past it,
        // so the common case costs one lookup and no per-request listener.
        if (address === undefined || address.sockets.size <= cap) return done();
        let inProgress = 0;
        for (const socket of address.sockets) if (answering(socket)) inProgress++;
        // This request's own socket is among them.
        done(inProgress > cap ? errors.tooManyInProgress(cap) : undefined);
      });
    } else if (cap > 0) {
      // Behind a proxy every client shares its sockets: requests are counted by the address TRUST_PROXY resolves.
      const busy = new Map<string, number>();
      app.addHook('onRequest', (request, reply, done) => {
        const client = request.ip;
        const inProgress = busy.get(client) ?? 0;
        if (inProgress >= cap) return done(errors.tooManyInProgress(cap));
        busy.set(client, inProgress + 1);
        reply.raw.once('close', () => {
          const left = (busy.get(client) ?? 1) - 1;
          if (left === 0) busy.delete(client);
          else busy.set(client, left);
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
    if (seen && !answering(socket) && seen.since < oldestSince) {
      oldest = socket;
      oldestSince = seen.since;
    }
  }
  oldest?.destroy();
}
