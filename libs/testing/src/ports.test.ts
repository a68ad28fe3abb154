import { createServer, type Server } from 'node:net';
import { readFileSync } from 'node:fs';
import { freePort } from './ports';

const listen = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

describe('freePort', () => {
  it('hands out distinct ports below the kernel ephemeral range, each one bindable', async () => {
    const ephemeralFloor = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    const ports: number[] = [];
    for (let i = 0; i < 40; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) expect(port).toBeLessThan(ephemeralFloor);
    const servers = await Promise.all(ports.map(listen));
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });

  it('passes over a port something else is listening on', async () => {
    const first = await freePort();
    // The next port in this band is taken by someone else before it is asked for.
    const squatter = await listen(first + 1).catch(() => undefined);
    try {
      const second = await freePort();
      expect(second).not.toBe(first);
      if (squatter) expect(second).not.toBe(first + 1);
      await listen(second).then((server) => new Promise((resolve) => server.close(resolve)));
    } finally {
      squatter?.close();
    }
  });
});
