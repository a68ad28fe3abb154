/**
 * `@modelcontextprotocol/server-everything`, the MCP project's reference server, as the MCP suites run it: a pinned
 * version from the test tool cache, over Streamable HTTP on a free loopback port (`/mcp`).
 */
import { spawn } from 'node:child_process';
import { freePort } from '@sbc/testing';
import { registryPackage } from './registry-packages';

export const EVERYTHING_SERVER = registryPackage('@modelcontextprotocol/server-everything', '2026.8.31');

export interface RunningEverythingServer {
  /** Its Streamable HTTP endpoint. */
  url: string;
  stop(): void;
}

/** Installs (once per cache) and starts the server; resolves once it says it listens. */
export async function startEverythingServer(): Promise<RunningEverythingServer> {
  const installed = await EVERYTHING_SERVER.install();
  const port = await freePort();
  // Its `streamableHttp` transport listens on PORT; it sees nothing else of the suite's environment.
  const child = spawn(process.execPath, [installed.bin('mcp-server-everything'), 'streamableHttp'], {
    env: { PATH: process.env.PATH, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let said = '';
    const timer = setTimeout(() => reject(new Error(`the everything server did not start: ${said}`)), 30_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      said += chunk.toString('utf8');
      if (said.includes('listening')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the everything server exited (${code}): ${said}`));
    });
  });
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => child.kill() };
}
