/**
 * A TCP proxy the test controls, in front of a real service: cut() drops
 * every connection and refuses new ones (the service is down), restore()
 * takes connections again on the same port (it is back).
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** The proxies' open sockets: each one tracked until it closes, an error closing it. */
export function openSockets(): { sockets: Set<Socket>; track: (socket: Socket) => void } {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  return { sockets, track };
}

export async function tcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const { sockets, track } = openSockets();
  const server: Server = createServer((client) => {
    track(client);
    const upstream = connect(target);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const listen = (port: number) => new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
  await listen(0);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });
  return {
    port,
    cut: stop,
    restore: () => listen(port),
    close: stop,
  };
}
