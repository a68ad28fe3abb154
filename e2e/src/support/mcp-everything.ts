/**
 * The reference MCP server (`@modelcontextprotocol/server-everything`), installed at a pinned version into the test
 * tool cache and run over Streamable HTTP on loopback: a real MCP server for the tool-server suites. Its launcher
 * takes the transport as its first argument and the port from `PORT`; it serves `/mcp`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '@sbc/testing';
import { registryPackage } from './registry-packages';

export const EVERYTHING_SERVER = registryPackage('@modelcontextprotocol/server-everything', '2026.8.31');

export interface RunningMcpServer {
  /** Its Streamable HTTP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;

export async function startEverythingServer(): Promise<RunningMcpServer> {
  const installed = await EVERYTHING_SERVER.install();
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [installed.bin('mcp-server-everything'), 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let said = '';
    const timer = setTimeout(() => reject(new Error(`the everything server did not start: ${said}`)), START_TIMEOUT_MS);
    child.stderr!.on('data', (chunk: Buffer) => {
      said += chunk.toString('utf8');
      if (said.includes('listening on port')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the everything server exited (${code}): ${said}`));
    });
  });
  // Keep draining its log so a chatty server never blocks on a full pipe.
  child.stderr!.resume();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
