/**
 * Slow and greedy clients. A connection idle for IDLE_TIMEOUT_SECONDS (no
 * byte moving either way) is closed, so a client that stops mid-request
 * cannot hold its socket and buffers for ever, while an upload or download
 * whose bytes keep moving is never cut (app.ts sets the idle and headers
 * timeouts on the server). One address may hold at most
 * MAX_CONNECTIONS_PER_IP connections: past that a new one is closed at once,
 * so hundreds of stalled sockets from one place leave room for everyone else.
 */
import fp from 'fastify-plugin';
import type { Socket } from 'node:net';
import type { AppContext } from '../context.js';
import type { Scope } from '../route.js';

export const connectionLimits = fp(
  async (app: Scope, ctx: AppContext) => {
    const cap = ctx.config.maxConnectionsPerIp;
    if (cap === 0) return;
    const open = new Map<string, number>();
    app.server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress ?? '';
      const count = (open.get(address) ?? 0) + 1;
      if (count > cap) {
        socket.destroy();
        return;
      }
      open.set(address, count);
      socket.once('close', () => {
        const left = (open.get(address) ?? 1) - 1;
        if (left === 0) open.delete(address);
        else open.set(address, left);
      });
    });
  },
  { name: 'pail-connection-limits' },
);
