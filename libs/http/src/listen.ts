import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RunningHttpServer {
  server: Server;
  /** `http://host:port` as bound (the real port when 0 was asked for). */
  url: string;
  port: number;
  /**
   * Stops taking connections, lets in-flight requests and streams finish for up to `drainMs`, then cuts
   * what is left. Idle keep-alive sockets are closed at once so they do not hold the drain open.
   */
  close(drainMs?: number): Promise<void>;
}

export async function listen(handler: RequestListener, options: { host: string; port: number }): Promise<RunningHttpServer> {
  const server = createServer(handler);
  server.keepAliveTimeout = 65_000; // longer than common load-balancer idle timeouts, so they close first
  server.headersTimeout = 66_000;
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    server,
    url: `http://${host}:${address.port}`,
    port: address.port,
    close(drainMs = 10_000) {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, drainMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
