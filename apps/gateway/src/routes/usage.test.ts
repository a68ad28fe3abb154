import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import express, { type NextFunction, type Request, type Response } from 'express';
import { CreditsSchema, GetSpendResponseSchema, type UsageLedgerService } from '@sbc/proto/sbc/usage/v1/ledger_pb';
import type { RpcClientOf } from '@sbc/rpc';
import { createLogger } from '@sbc/logging';
import type { Authorize } from '../auth/authorize';
import { errorHandler } from '../http/errors';
import { requestId } from '../http/request-id';
import { usageRoutes } from './usage';

type CreditsInit = MessageInitShape<typeof CreditsSchema>;
type SpendInit = MessageInitShape<typeof GetSpendResponseSchema>;

/** A ledger from the release before whole units: money as doubles only. */
const previousCredits: CreditsInit = {
  plan: 'plus',
  pots: [
    { pot: 'plan', granted: 20_000, used: 1_234.567_891, remaining: 18_765.432_109 },
    { pot: 'beta', granted: 0, used: 0, remaining: 0 },
    { pot: 'permanent', granted: 500, used: 0, remaining: 500 },
  ],
  balanceCredits: 19_265.432_109,
  totalUsageCredits: 1_234.567_891,
  periodUsageCredits: 1_234.567_891,
  capacityCredits: 20_500,
  keysCount: 2,
  paidUsdWeek: 1.234_568,
  listUsdWeek: 2.000_000_001,
  overageLimitCredits: 1_000,
  overageUsedCredits: 0.1,
  overageUsd: 0.000_1,
};
const previousOpenAi = {
  provider: 'openai',
  label: 'OpenAI',
  totalUsd: 0.000_123,
  usageUsd: 0.000_123,
  measuredUsd: 0,
  estimatedUsd: 0.000_123,
  residualUsd: 0.000_123,
  status: 'residual',
};
const previousSpend: SpendInit = {
  totalUsd: 25.000_123,
  tiedUsd: 25,
  estimatedUsd: 0.000_123,
  providers: [{ ...previousOpenAi, services: [{ service: 'gpt-4o', totalUsd: 0.000_123 }] }],
  series: [{ day: '2026-11-01', providers: { openai: { measured: 0, estimated: 0.000_123, plan: 0 } } }],
};

/** The current ledger: the same amounts in whole units, and the doubles for one more release. */
const currentCredits: CreditsInit = {
  ...previousCredits,
  pots: [
    {
      ...previousCredits.pots![0],
      grantedMicrocredits: 20_000_000_000n,
      usedMicrocredits: 1_234_567_891n,
      remainingMicrocredits: 18_765_432_109n,
    },
    { ...previousCredits.pots![1], grantedMicrocredits: 0n, usedMicrocredits: 0n, remainingMicrocredits: 0n },
    {
      ...previousCredits.pots![2],
      grantedMicrocredits: 500_000_000n,
      usedMicrocredits: 0n,
      remainingMicrocredits: 500_000_000n,
    },
  ],
  balanceMicrocredits: 19_265_432_109n,
  totalUsageMicrocredits: 1_234_567_891n,
  periodUsageMicrocredits: 1_234_567_891n,
  capacityMicrocredits: 20_500_000_000n,
  paidNanoUsdWeek: 1_234_568_000n,
  listNanoUsdWeek: 2_000_000_001n,
  overageLimitMicrocredits: 1_000_000_000n,
  overageUsedMicrocredits: 100_000n,
  overageNanoUsd: 100_000n,
};
const currentSpend: SpendInit = {
  ...previousSpend,
  totalNanoUsd: 25_000_123_000n,
  tiedNanoUsd: 25_000_000_000n,
  estimatedNanoUsd: 123_000n,
  providers: [
    {
      ...previousOpenAi,
      totalNanoUsd: 123_000n,
      usageNanoUsd: 123_000n,
      purchaseNanoUsd: 0n,
      measuredNanoUsd: 0n,
      estimatedNanoUsd: 123_000n,
      planNanoUsd: 0n,
      residualNanoUsd: 123_000n,
      services: [{ service: 'gpt-4o', totalUsd: 0.000_123, totalNanoUsd: 123_000n }],
    },
  ],
  series: [
    {
      day: '2026-11-01',
      providers: {
        openai: {
          measured: 0,
          estimated: 0.000_123,
          plan: 0,
          measuredNanoUsd: 0n,
          estimatedNanoUsd: 123_000n,
          planNanoUsd: 0n,
        },
      },
    },
  ],
};

const signedIn = (() => (req: Request, _res: Response, next: NextFunction) => {
  req.principal = { kind: 'session', userId: 'usr_money', scopes: 'unrestricted', revoked: false, operator: false };
  next();
}) as unknown as Authorize;

/** Serves the usage routes over a ledger that answers the given replies. */
async function serve(credits: CreditsInit, spend: SpendInit): Promise<{ base: string; server: Server }> {
  const ledger = {
    getCredits: async () => ({ credits: create(CreditsSchema, credits) }),
    getSpend: async () => create(GetSpendResponseSchema, spend),
  } as unknown as RpcClientOf<typeof UsageLedgerService>;
  const app = express();
  app.use(usageRoutes({ authorize: signedIn, ledger }));
  app.use((_error: unknown, _req: Request, res: Response, _next: NextFunction) => void res.status(500).end());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function read(credits: CreditsInit, spend: SpendInit) {
  const { base, server } = await serve(credits, spend);
  try {
    const answers = await Promise.all(['/v1/credits', '/v1/spend'].map((route) => fetch(base + route)));
    const [creditsBody, spendBody] = await Promise.all(
      answers.map(async (res) => (res.status === 200 ? await res.json() : { status: res.status })),
    );
    const { request_id: _creditsId, ...creditsView } = creditsBody as Record<string, unknown>;
    const { request_id: _spendId, from: _from, to: _to, ...spendView } = spendBody as Record<string, unknown>;
    return { credits: creditsView, spend: spendView };
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('money from the ledger during the release that sends both whole units and doubles', () => {
  it('a ledger that predates the whole units is rendered exactly as a current one', async () => {
    const fromPrevious = await read(previousCredits, previousSpend);
    const fromCurrent = await read(currentCredits, currentSpend);
    expect(fromCurrent).toEqual(fromPrevious);
    expect(fromCurrent.credits).toMatchObject({
      balance_credits: 19_265.432_109,
      credits: { plan: 18_765.432_109, permanent: 500, pots: { plan: { used: 1_234.567_891 } } },
      paid_usd_week: 1.234_568,
      list_usd_week: 2.000_000_001,
      saved_usd_week: 0.765_432_001,
      overage: { limit_credits: 1_000, used_credits: 0.1, usd: 0.000_1 },
    });
    expect(fromCurrent.spend).toMatchObject({
      total_usd: 25.000_123,
      tied_usd: 25,
      estimated_usd: 0.000_123,
      providers: [{ provider: 'openai', residual_usd: 0.000_123, services: [{ total_usd: 0.000_123 }] }],
      series: [{ providers: { openai: { estimated: 0.000_123 } } }],
    });
  });

  it('the whole units win over the doubles when a ledger sends both', async () => {
    const { credits } = await read({ ...currentCredits, balanceCredits: 1, balanceMicrocredits: 7n }, currentSpend);
    expect(credits).toMatchObject({ balance_credits: 0.000_007, credits: { total: 0.000_007 } });
  });

  it('a double that holds no amount fails the call instead of being rendered', async () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, 1e300]) {
      const { credits, spend } = await read(
        { ...previousCredits, balanceCredits: bad },
        { ...previousSpend, totalUsd: bad },
      );
      expect({ bad, credits, spend }).toEqual({ bad, credits: { status: 500 }, spend: { status: 500 } });
    }
  });
});

describe('usage windows outside the years the ledger can hold', () => {
  /** Each ledger call the routes made. */
  const calls: string[] = [];
  const ledger = new Proxy(
    {},
    {
      get: (_target, method: string) => async () => {
        calls.push(method);
        throw new Error('the ledger is not reached by a refused window');
      },
    },
  ) as RpcClientOf<typeof UsageLedgerService>;
  let base = '';
  let server: Server;

  beforeAll(async () => {
    const app = express();
    app.use(requestId());
    app.use(usageRoutes({ authorize: signedIn, ledger }));
    app.use(
      errorHandler({ baseUrl: 'http://gateway.test', logger: createLogger({ service: 'test', level: 'silent' }) }),
    );
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it.each([
    ['/v1/usage/requests?from=9999-12-31T00:00:00Z&to=0000-01-01', 'from'],
    ['/v1/usage/requests?to=0000-01-01', 'to'],
    ['/v1/usage/requests?from=0001-01-01T00:00:00Z', 'from'],
    ['/v1/spend?to=9999-12-31T23:59:59Z', 'to'],
    ['/v1/spend?from=0000-01-01&to=2026-01-01', 'from'],
    ['/v1/usage?from=0000-12-31&to=0001-03-01', 'from'],
    ['/v1/usage/daily?from=9999-12-30T12:00:00Z&to=9999-12-31', 'from'],
    ['/v1/usage/breakdown?from=0001-01-01&to=0001-01-03&tz=Pacific/Kiritimati', 'from'],
    ['/v1/usage/report?to=9999-12-31', 'to'],
    ['/v1/usage/export?to=9999-12-31T00:00:00Z', 'to'],
  ])('GET %s is a 400 naming %s, before the ledger is asked', async (path, param) => {
    calls.length = 0;
    const res = await fetch(base + path);
    expect({ status: res.status, body: await res.json() }).toMatchObject({
      status: 400,
      body: { error: 'invalid_request', param },
    });
    expect(calls).toEqual([]);
  });
});
