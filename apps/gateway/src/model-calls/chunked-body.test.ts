import { createServer, request, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { chunkBodyStart, chunkBuffer, chunkedSocket, chunkOf, writeChunk } from './chunked-body';

describe('chunked body framing', () => {
  it('frames a body as its size in lowercase hex, CRLF, the bytes and CRLF, for every size line length', () => {
    for (const size of [1, 9, 15, 16, 255, 256, 4095, 4096, 65535, 65536, 1_048_576]) {
      const body = 'x'.repeat(size);
      expect(chunkOf(body).toString('latin1')).toBe(`${size.toString(16)}\r\n${body}\r\n`);
      expect(chunkOf(Buffer.from(body)).equals(chunkOf(body))).toBe(true);
      expect(chunkBodyStart(size)).toBe(size.toString(16).length + 2);
      expect(chunkBuffer(size).length).toBe(chunkBodyStart(size) + size + 2);
    }
  });

  it('counts a string body in UTF-8 bytes, not characters', () => {
    expect(chunkOf('é😀').toString('utf8')).toBe('6\r\né😀\r\n');
  });

  it(
    'writes chunks that an HTTP client reads back between those res.write and res.end wrote, and none for an ' +
      'HTTP/1.0 caller',
    async () => {
      const direct: boolean[] = [];
      const server = createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first,');
        res.flushHeaders();
        const socket = chunkedSocket(res);
        direct.push(socket !== undefined);
        if (socket) {
          socket.write(chunkOf('second,'));
          socket.write(chunkOf(Buffer.from('third,')));
        }
        res.end('last');
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const { port } = server.address() as AddressInfo;
      const read = async () => {
        const req = request({ port, host: '127.0.0.1', path: '/' });
        req.end();
        const [res] = (await once(req, 'response')) as [IncomingMessage];
        let text = '';
        for await (const piece of res) text += String(piece);
        return text;
      };
      try {
        // Twice on one kept-alive connection: the second reply parses cleanly after the first.
        expect(await read()).toBe('first,second,third,last');
        expect(await read()).toBe('first,second,third,last');
        // HTTP/1.0 has no chunked bodies: the reply goes through res alone and ends with the connection.
        const raw = connect(port, '127.0.0.1');
        raw.end('GET / HTTP/1.0\r\n\r\n');
        let answer = '';
        for await (const piece of raw) answer += String(piece);
        expect(answer.endsWith('\r\n\r\nfirst,last')).toBe(true);
        expect(direct).toEqual([true, true, false]);
      } finally {
        server.closeAllConnections();
        server.close();
      }
    },
  );

  it(
    'leaves a chunk the socket could not take whole to that ' + 'socket: chunks for other sockets do not overwrite it',
    async () => {
      const replies = new Map<string, import('node:http').ServerResponse>();
      const server = createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.flushHeaders();
        replies.set(req.url!, res);
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const { port } = server.address() as AddressInfo;
      const open = async (path: string) => {
        const req = request({ port, host: '127.0.0.1', path });
        req.end();
        const [res] = (await once(req, 'response')) as [IncomingMessage];
        return res;
      };
      const readAll = async (res: IncomingMessage) => {
        const pieces: Buffer[] = [];
        for await (const piece of res) pieces.push(piece as Buffer);
        return Buffer.concat(pieces).toString('latin1');
      };
      try {
        // A's caller reads nothing until A's socket is full; B's reads as it goes.
        const slow = await open('/a');
        slow.pause();
        const fast = await open('/b');
        const slowSocket = chunkedSocket(replies.get('/a')!)!;
        const fastSocket = chunkedSocket(replies.get('/b')!)!;
        const body = (name: string, i: number) => `${name}${i}:`.padEnd(4_000, name);
        let sent = '';
        for (let i = 0; ; i++) {
          sent += body('a', i);
          if (!writeChunk(slowSocket, chunkOf(body('a', i), slowSocket))) break;
          expect(i).toBeLessThan(100_000);
        }
        // A's last chunk is still being sent; B's chunks are made and written meanwhile.
        let sentToFast = '';
        for (let i = 0; i < 20; i++) {
          sentToFast += body('b', i);
          writeChunk(fastSocket, chunkOf(body('b', i), fastSocket));
        }
        replies.get('/a')!.end();
        replies.get('/b')!.end();
        const [slowText, fastText] = await Promise.all([readAll(slow.resume()), readAll(fast)]);
        expect(fastText === sentToFast).toBe(true);
        expect(slowText.length).toBe(sent.length);
        expect(slowText === sent).toBe(true);
      } finally {
        server.closeAllConnections();
        server.close();
      }
    },
  );
});
