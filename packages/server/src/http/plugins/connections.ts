/**
 * Slow and greedy clients. A connection on which no byte has moved either way
 * for IDLE_TIMEOUT_SECONDS is closed, so a client that stops mid-request
 * cannot hold its socket and buffers for ever, while an upload or download
 * whose bytes keep moving is never cut. One address may hold at most
 * MAX_CONNECTIONS_PER_IP connections: past that a new one is closed at once,
 * so hundreds of stalled sockets from one place leave room for everyone else.
 * (Late headers are cut by the server's headersTimeout, set in app.ts.)
 *
 * Idleness is found by a sweep over the open sockets that compares their byte
 * counts, not by a socket timeout, which is re-armed on every read and write
 * (docs/performance.md).
 */
import fp from 'fastify-plugin';
import type { Socket } from 'node:net';
import type { AppContext } from '../context.js';
import type { Scope } from '../route.js';

export const connectionLimits = fp(
  async (app: Scope, ctx: AppContext) => {
    const cap = ctx.config.maxConnectionsPerIp;
    const idleMs = ctx.config.idleTimeoutSeconds * 1000;
    const perAddress = new Map<string, number>();
    const sockets = new Map<Socket, { moved: number; since: number }>();

    app.server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress ?? '';
      const count = (perAddress.get(address) ?? 0) + 1;
      if (cap > 0 && count > cap) {
        socket.destroy();
        return;
      }
      perAddress.set(address, count);
      sockets.set(socket, { moved: 0, since: Date.now() });
      socket.once('close', () => {
        sockets.delete(socket);
        const left = (perAddress.get(address) ?? 1) - 1;
        if (left === 0) perAddress.delete(address);
        else perAddress.set(address, left);
      });
    });

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
