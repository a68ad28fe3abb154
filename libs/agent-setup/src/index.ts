export {
  AGENTS,
  DEFAULT_MODEL,
  KEY_PLACEHOLDER,
  agentSetup,
  shellSnippet,
  type AgentDialect,
  type AgentId,
} from './agent-setup';
