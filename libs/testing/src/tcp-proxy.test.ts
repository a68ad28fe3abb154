import net from 'node:net';
import { startTcpProxy } from './tcp-proxy';

/** An echo server, and a client of it through the proxy that collects what comes back. */
async function echoThrough() {
  const echo = net.createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: (echo.address() as net.AddressInfo).port });
  const connect = async () => {
    const [host, port] = proxy.address.split(':');
    const socket = net.connect(Number(port), host);
    let received = '';
    socket.on('data', (chunk) => (received += chunk));
    await new Promise((resolve) => socket.once('connect', resolve));
    return { socket, received: () => received };
  };
  const close = async () => {
    await proxy.close();
    await new Promise((resolve) => echo.close(resolve));
  };
  return { proxy, connect, close };
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the TCP proxy for network outages', () => {
  it('passes bytes both ways; in a blackhole none move, and none are lost when it lifts', async () => {
    const { proxy, connect, close } = await echoThrough();
    const client = await connect();
    client.socket.write('before ');
    await sleep(50);
    expect(client.received()).toBe('before ');
    proxy.blackhole();
    client.socket.write('during ');
    const late = await connect(); // accepted, but answered only once the network is back
    late.socket.write('late');
    await sleep(100);
    expect(client.received()).toBe('before ');
    expect(late.received()).toBe('');
    proxy.restore();
    await sleep(100);
    expect(client.received()).toBe('before during ');
    expect(late.received()).toBe('late');
    client.socket.destroy();
    late.socket.destroy();
    await close();
  });
});
