import type { Principal } from '../auth/authenticator';
import { createLogger } from '@sbc/logging';
import type { HookedCall } from '../model-calls/call-hooks';
import { createMemoryCaptureStore } from './capture-store';
import { createCaptureHook } from './call-capture';

const hook = createCaptureHook({
  captures: createMemoryCaptureStore({ ttlMs: 60_000, maxBytes: 1_000_000 }),
  logger: createLogger({ service: 'capture-test', level: 'silent' }),
});
const principal = (kind: Principal['kind']): Principal =>
  ({ kind, userId: 'usr_1', scopes: 'unrestricted', revoked: false, operator: false }) as Principal;
const hooked = (kind: Principal['kind'], headers: Record<string, string>) =>
  ({
    principal: principal(kind),
    headers,
    out: { requestId: 'req_1', addHeaders: () => undefined },
  }) as unknown as HookedCall;

describe('who can ask for a capture', () => {
  it('a signed-in session asking with x-sbc-capture: 1 has its upstream exchange watched and recorded', () => {
    const part = hook.partIn(hooked('session', { 'x-sbc-capture': '1' }));
    expect(part?.attempt).toBeInstanceOf(Function);
    expect(part?.record).toBeInstanceOf(Function);
  });

  it('a key or a device token asking, or a session not asking, leaves the call exactly as it was', () => {
    expect(hook.partIn(hooked('key', { 'x-sbc-capture': '1' }))).toBeUndefined();
    expect(hook.partIn(hooked('device', { 'x-sbc-capture': '1' }))).toBeUndefined();
    expect(hook.partIn(hooked('session', {}))).toBeUndefined();
    expect(hook.partIn(hooked('session', { 'x-sbc-capture': 'yes' }))).toBeUndefined();
  });
});
