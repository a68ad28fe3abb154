import path from 'node:path';
import OpenAI from 'openai';
import { freePort } from '@sbc/testing';
import { bundleScratch, exited, startBundle, type RunningBundle } from '../support/embedded-bundle';
import { usageRows } from '../support/usage-rows';

/**
 * `kill -9` of the embedded bundle (`npm start`) while streaming calls run, then a start on the same data
 * directory: the service starts cleanly, keys made before are intact, and every call whose caller saw the
 * end of its reply has exactly one usage row (its event was in the outbox before the reply's last bytes).
 */
const KEY = 'sbc_process_kill_key_0123456789abcdefgh';
const LOAD_MS = 2_500;
const CALLERS = 12;

function startKillable(dataDir: string, port: number): Promise<RunningBundle> {
  return startBundle(port, {
    SBC_DATA_DIR: dataDir,
    SBC_BOOTSTRAP_KEY: KEY,
    // Each reply streams 30 tokens over about 150 ms, so calls are always mid-stream when the kill lands.
    SIM_TOKENS_PER_SECOND: '200',
    SIM_LATENCY_MS: '0',
    RATE_LIMIT_PER_MINUTE: '100000',
  });
}

/** The request ids of every usage row of the key's owner, as the ledger holds them now. */
async function usageRequestIds(url: string, key: string): Promise<string[]> {
  return (await usageRows(url, key)).map((row) => row.request_id);
}

describe('the embedded bundle after kill -9', () => {
  const { dir, children } = bundleScratch('sbc-process-kill-');

  it(
    'starts cleanly on the same data, with keys intact and ' + 'one usage row for every call the caller saw complete',
    async () => {
      const port = await freePort();
      const first = await startKillable(path.join(dir(), 'data'), port);
      children.push(first.child);
      const minted = await fetch(`${first.url}/v1/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'made before the kill', preset: 'gateway' }),
      });
      expect(minted.status).toBe(201);
      const mintedKey = ((await minted.json()) as { key: string }).key;

      const client = new OpenAI({ apiKey: KEY, baseURL: `${first.url}/v1`, maxRetries: 0, timeout: 10_000 });
      const completed: string[] = [];
      let stopping = false;
      let n = 0;
      const caller = async () => {
        while (!stopping) {
          const id = `req_kill_${++n}_${Date.now()}`;
          try {
            const stream = await client.chat.completions.create(
              { model: 'house', stream: true, messages: [{ role: 'user', content: `sim-tokens:30 call ${id}` }] },
              { headers: { 'x-request-id': id } },
            );
            let finished = false;
            for await (const chunk of stream) if (chunk.choices[0]?.finish_reason) finished = true;
            // The SDK ends the loop only after the stream's terminator: this caller saw its reply complete.
            if (finished) completed.push(id);
          } catch {
            return; // the process is gone
          }
        }
      };
      const load = Array.from({ length: CALLERS }, () => caller());
      await new Promise((resolve) => setTimeout(resolve, LOAD_MS));
      first.child.kill('SIGKILL');
      stopping = true;
      await Promise.all(load);
      await exited(first.child, 10_000);
      expect(completed.length).toBeGreaterThan(20);

      const second = await startKillable(path.join(dir(), 'data'), port);
      children.push(second.child);
      try {
        const whoami = await fetch(`${second.url}/v1/keys/whoami`, {
          headers: { authorization: `Bearer ${mintedKey}` },
        });
        expect(whoami.status).toBe(200);
        // The outbox is replayed into the ledger at start; wait for it to catch up.
        const deadline = Date.now() + 30_000;
        let ids = await usageRequestIds(second.url, KEY);
        while (completed.some((id) => !ids.includes(id)) && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 250));
          ids = await usageRequestIds(second.url, KEY);
        }
        const missing = completed.filter((id) => !ids.includes(id));
        expect(missing).toEqual([]);
        const counts = new Map<string, number>();
        for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
        expect(completed.filter((id) => counts.get(id) !== 1)).toEqual([]);
      } finally {
        second.child.kill('SIGTERM');
        await exited(second.child, 30_000);
      }
    },
    420_000,
  );
});
