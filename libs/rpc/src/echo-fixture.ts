// Test support for libs/rpc (not exported): a real server and client for sbc.rpctest.v1.EchoService over
// loopback, with a logger whose lines the test can read.
import { ApiError, isErrorCode } from '@sbc/errors';
import { createLogger } from '@sbc/logging';
import { EchoService } from '@sbc/proto/sbc/rpctest/v1/echo_pb';
import { createRpcClient } from './client';
import { createRpcServer, type RpcServer } from './server';
import type { RpcClient, RpcContext, ServiceImpl } from './types';

type EchoMethods = (typeof EchoService)['method'];

export interface EchoFixture {
  server: RpcServer;
  address: string;
  client: RpcClient<EchoMethods>;
  /** Every parsed log line the server wrote. */
  logs: Record<string, unknown>[];
  /** The context of every call a handler received, in arrival order. */
  contexts: RpcContext[];
  close(): Promise<void>;
}

/** Resolves after `ms`, or as soon as the signal aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Polls until the predicate holds, failing the test after `timeoutMs`. */
export async function eventually(predicate: () => boolean, timeoutMs = 2_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await sleep(10);
  }
}

/** What `fail_with` asks for: "plain" is a non-ApiError with a secret in its message, else a registry code. */
function failureFor(failWith: string): unknown {
  if (failWith === 'plain') return new Error('connection to postgres://admin:hunter2@db failed');
  if (isErrorCode(failWith)) return new ApiError(failWith);
  throw new Error(`unknown fail_with ${failWith}`);
}

function echoImpl(contexts: RpcContext[]): ServiceImpl<EchoMethods> {
  return {
    async echo(request, ctx) {
      contexts.push(ctx);
      if (request.sleepMs > 0) await sleep(request.sleepMs, ctx.signal);
      if (request.failWith) throw failureFor(request.failWith);
      return { text: request.text, requestId: ctx.requestId, hasDeadline: ctx.deadline !== undefined };
    },
    async *echoStream(request, ctx) {
      contexts.push(ctx);
      for (let index = 0; index < request.count; index += 1) {
        if (request.failAfter > 0 && index === request.failAfter) throw failureFor(request.failWith);
        if (request.intervalMs > 0) await sleep(request.intervalMs, ctx.signal);
        if (ctx.signal.aborted) return;
        yield { text: request.text, index };
      }
    },
  };
}

export async function startEchoServer(overrides: Partial<ServiceImpl<EchoMethods>> = {}): Promise<EchoFixture> {
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({
    service: 'rpc-test',
    level: 'debug',
    destination: { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
  });
  const contexts: RpcContext[] = [];
  const server = createRpcServer({ logger });
  server.add(EchoService, { ...echoImpl(contexts), ...overrides });
  const address = await server.listen('127.0.0.1:0');
  const client = createRpcClient(EchoService, { target: address });
  return {
    server,
    address,
    client,
    logs,
    contexts,
    async close() {
      client.close();
      await server.stop(200);
    },
  };
}
