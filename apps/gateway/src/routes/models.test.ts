import type { GetRoutingTableResponse } from '@sbc/proto/sbc/account/v1/account_pb';
import type { Principal } from '../auth/authenticator';
import type { Engine } from '../routing/engines';
import { simulatorHouseEngines } from '../routing/engines';
import { listModels, type ModelRoutesDeps } from './models';

const owner: Principal = { kind: 'key', userId: 'usr_1', scopes: 'unrestricted', revoked: false, operator: false };
const emptyTable = { aliases: [], upstreams: [] } as unknown as GetRoutingTableResponse;

function depsWith(down: (engine: Engine) => boolean, house = simulatorHouseEngines('http://127.0.0.1:8090')) {
  return {
    house,
    providers: {},
    reachability: {
      reachOf: (engine: Engine) =>
        down(engine)
          ? { reachable: false, error: 'ECONNREFUSED', checkedAtMs: 0 }
          : { reachable: true, checkedAtMs: 0 },
    },
  } as unknown as ModelRoutesDeps;
}

describe('GET /v1/models on house models', () => {
  it('says a house model is unavailable, and why, while the edge cannot reach its engine', () => {
    const house = listModels(
      depsWith(() => true),
      owner,
      emptyTable,
    ).find((model) => model.id === 'house');
    expect(house).toMatchObject({
      available: false,
      reason: 'the edge cannot reach its engine: sim-upstream (bundled simulator) (ECONNREFUSED)',
    });
  });

  it('names the engines that serve it while they are reachable', () => {
    const house = listModels(
      depsWith(() => false),
      owner,
      emptyTable,
    ).find((model) => model.id === 'house');
    expect(house).toMatchObject({ available: true, reason: 'served by sim-upstream (bundled simulator)' });
  });

  it('stays available on a fallback engine, and names the one it cannot reach', () => {
    const primary: Engine = { dialect: 'openai', baseUrl: 'http://a.test', model: 'm', headers: {}, label: 'a.test' };
    const fallback: Engine = { ...primary, baseUrl: 'http://b.test', label: 'b.test' };
    const house = listModels(
      depsWith((engine) => engine === primary, { house: [primary, fallback] }),
      owner,
      emptyTable,
    ).find((model) => model.id === 'house');
    expect(house).toMatchObject({ available: true, reason: 'served by b.test; cannot reach a.test (ECONNREFUSED)' });
  });
});
