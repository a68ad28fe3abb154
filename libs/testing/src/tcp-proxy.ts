import net from 'node:net';

/**
 * A TCP proxy in front of a server, for tests of what a service does when the network to it goes dark. A
 * blackhole moves no byte either way and answers no new connection, and loses nothing: when it lifts, what was
 * sent meanwhile arrives, as TCP's retransmissions would deliver it after a real outage.
 */
export interface TcpProxy {
  /** `host:port` to give the client instead of the server's. */
  address: string;
  blackhole(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let dark = false;
  const sockets = new Set<net.Socket>();
  /** Connections accepted while dark: joined to the server once it lifts. */
  const held: net.Socket[] = [];

  const join = (client: net.Socket) => {
    const server = net.connect(target.port, target.host);
    for (const socket of [client, server]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined); // the other side is closed with it
    }
    client.pipe(server).on('close', () => client.destroy());
    server.pipe(client).on('close', () => server.destroy());
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
    if (dark) for (const socket of [client, server]) socket.pause();
  };

  const listener = net.createServer((client) => {
    client.on('error', () => undefined);
    if (dark) {
      client.pause();
      held.push(client);
    } else join(client);
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const { port } = listener.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    blackhole() {
      dark = true;
      for (const socket of sockets) socket.pause();
    },
    restore() {
      dark = false;
      for (const socket of sockets) socket.resume();
      for (const client of held.splice(0)) {
        join(client);
        client.resume();
      }
    },
    async close() {
      for (const socket of [...sockets, ...held]) socket.destroy();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}
