import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Principal } from '../auth/authenticator';
import type { McpSessions } from './mcp-sessions';

/**
 * For tests of the MCP gateway without the edge: an HTTP server on a free loopback port that hands every request
 * to `sessions` as `principal`'s, as the edge's route does once the caller is authenticated; and its `/mcp` URL.
 */
export async function serveSessions(
  sessions: McpSessions,
  principal: Principal,
): Promise<{ http: Server; url: string }> {
  const http = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      void sessions.handle(req, res, undefined, text ? JSON.parse(text) : undefined, { principal, requestId: 'req_1' });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return { http, url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp` };
}
