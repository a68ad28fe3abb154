import { createServer, type Server } from 'node:net';
import { simulatorHouseEngines, type Engine, type HouseEngines } from './engines';
import { createEngineReachability } from './engine-reachability';

async function listening(): Promise<{ server: Server; url: string }> {
  const server = createServer((socket) => socket.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${port}` };
}

function firstEngine(house: HouseEngines, model: string): Engine {
  const engine = house[model]?.[0];
  if (!engine) throw new Error(`no engine for ${model}`);
  return engine;
}

describe('house engine reachability', () => {
  it('finds an engine nobody listens on, names its models, and sees it come back', async () => {
    const { server, url } = await listening();
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const house = simulatorHouseEngines(url);
    const changes: Array<[string, boolean]> = [];
    const reachability = createEngineReachability({
      house,
      intervalMs: 50,
      timeoutMs: 1_000,
      onChange: (origin, reach) => changes.push([origin, reach.reachable]),
    });
    await reachability.start();
    try {
      expect(reachability.reachOf(firstEngine(house, 'house'))).toMatchObject({
        reachable: false,
        error: 'ECONNREFUSED',
      });
      expect(reachability.unreachable().map((engine) => engine.model)).toEqual([
        'house',
        'house-omni',
        'house-fast',
        'house-embed',
      ]);
      expect(reachability.unreachable()[0]).toMatchObject({ origin: url, engine: firstEngine(house, 'house').label });

      const back = createServer((socket) => socket.end());
      await new Promise<void>((resolve) => back.listen(port, '127.0.0.1', resolve));
      try {
        for (let waited = 0; reachability.unreachable().length > 0 && waited < 5_000; waited += 20)
          await new Promise((resolve) => setTimeout(resolve, 20));
        expect(reachability.unreachable()).toEqual([]);
        expect(reachability.reachOf(firstEngine(house, 'house-fast'))?.reachable).toBe(true);
        // Logged when it changed, not on every probe.
        expect(changes).toEqual([
          [url, false],
          [url, true],
        ]);
      } finally {
        await new Promise<void>((resolve) => back.close(() => resolve()));
      }
    } finally {
      reachability.stop();
    }
  });

  it('counts an engine that takes connections as reachable from the first probe', async () => {
    const { server, url } = await listening();
    const reachability = createEngineReachability({
      house: simulatorHouseEngines(url),
      intervalMs: 60_000,
      timeoutMs: 1_000,
    });
    try {
      await reachability.start();
      expect(reachability.unreachable()).toEqual([]);
    } finally {
      reachability.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
