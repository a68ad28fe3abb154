import type { EgressCaller } from '@sbc/egress';
import type { Principal } from '../auth/authenticator';

/** One tool server as the edge dials it. `headers` hold decrypted secrets: never logged, never rendered. */
export interface McpToolServer {
  /** At `/mcp` its tools are `${slug}__${tool}`; `/mcp/{slug}` serves it alone. Never contains `__`. */
  slug: string;
  label: string;
  /** Its Streamable HTTP URL. */
  url: string;
  /** Sent on every request to it (its stored headers and bearer token). */
  headers: Record<string, string>;
  /** `account`: the caller's own; `team`: from the team pool (team keys only). */
  source: 'account' | 'team';
  /** Whose egress rules apply when it is dialed: its owner's standing. */
  dialAs: EgressCaller;
}

/** The tool servers a credential may use before its key's `allowed_tools` narrow them (the account service's). */
export interface ToolServerSource {
  serversFor(principal: Pick<Principal, 'userId' | 'key'>, requestId: string): Promise<McpToolServer[]>;
}
