import type { Principal } from '../auth/authenticator';

/** What each request to a gateway session carries to the handlers: the credential as authenticated for it. */
export interface McpRequestContext {
  principal: Principal;
  requestId: string;
}
