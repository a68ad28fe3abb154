import { createServer } from 'node:net';

// Why not listen(0): the kernel hands out a port from its ephemeral range (32768-60999 on Linux), the same range
// it draws from for the local end of every outgoing connection. Between the moment the port is freed here and the
// moment a child process binds it, any connection this machine opens (another Jest worker's to PostgreSQL, say)
// may take it, and the child fails with EADDRINUSE. So ports come from below that range, where no outgoing
// connection lands, and each Jest worker draws from a band of its own, so two workers never hand out the same one.
const LOWEST = 12_000;
const BAND = 2_500;
const BANDS = 8; // 12,000 + 8 × 2,500 = 32,000, under the ephemeral range's floor.

const handedOut = new Set<number>();
const worker = Number(process.env.JEST_WORKER_ID ?? 0);
const band = LOWEST + ((Number.isInteger(worker) ? worker : 0) % BANDS) * BAND;
let next = Math.floor(Math.random() * BAND);

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A TCP port on 127.0.0.1, free a moment ago and handed out once by this process, for a child process that needs a
 * fixed port. It lies outside the kernel's ephemeral range, in this Jest worker's own band.
 */
export async function freePort(): Promise<number> {
  for (let tried = 0; tried < BAND; tried++) {
    const port = band + (next++ % BAND);
    if (handedOut.has(port)) continue;
    if (await canListen(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port in ${band}-${band + BAND - 1}`);
}
