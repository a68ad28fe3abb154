import type { Principal } from '../auth/authenticator';
import { createLogger } from '@sbc/logging';
import { createMemoryCaptureStore } from './capture-store';
import { captureCall, type CaptureDeps } from './call-capture';

const deps = {
  upstream: {},
  usage: {},
  captures: createMemoryCaptureStore({ ttlMs: 60_000, maxBytes: 1_000_000 }),
  logger: createLogger({ service: 'capture-test', level: 'silent' }),
} as unknown as CaptureDeps;
const principal = (kind: Principal['kind']): Principal =>
  ({ kind, userId: 'usr_1', scopes: 'unrestricted', revoked: false, operator: false }) as Principal;

describe('who can ask for a capture', () => {
  it('a signed-in session asking with x-sbc-capture: 1 has its upstream exchange watched', () => {
    const watched = captureCall(deps, { 'x-sbc-capture': '1' }, principal('session'), 'req_1');
    expect(watched).not.toBe(deps);
    expect(watched.upstream).not.toBe(deps.upstream);
    expect(watched.usage).not.toBe(deps.usage);
  });

  it('a key or a device token asking, or a session not asking, leaves the call exactly as it was', () => {
    expect(captureCall(deps, { 'x-sbc-capture': '1' }, principal('key'), 'req_1')).toBe(deps);
    expect(captureCall(deps, { 'x-sbc-capture': '1' }, principal('device'), 'req_1')).toBe(deps);
    expect(captureCall(deps, {}, principal('session'), 'req_1')).toBe(deps);
    expect(captureCall(deps, { 'x-sbc-capture': 'yes' }, principal('session'), 'req_1')).toBe(deps);
  });
});
