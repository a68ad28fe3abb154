import { channelOptionsFor } from './client';

describe('channel options', () => {
  it('a dns:/// target (headless Service) spreads calls with round_robin and ignores DNS-provided config', () => {
    const options = channelOptionsFor('dns:///account.sbc.svc.cluster.local:50051');
    expect(JSON.parse(String(options['grpc.service_config']))).toEqual({ loadBalancingConfig: [{ round_robin: {} }] });
    expect(options['grpc.service_config_disable_resolution']).toBe(1);
  });

  it('a plain host:port target keeps the default policy', () => {
    expect(channelOptionsFor('127.0.0.1:50051')).toEqual({});
  });
});
