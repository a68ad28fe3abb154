import { loadEmbeddedConfig } from './config';

describe('embedded config', () => {
  it('the bundled simulator never serves fault injection, even when SIM_FAULTS is set', () => {
    expect(loadEmbeddedConfig({ SIM_FAULTS: 'true' }).sim.faultControl).toBe(false);
  });
});
