export {
  DETECTOR_TYPES,
  DetectorSet,
  detectorIssues,
  GUARDRAIL_ACTIONS,
  placeholderOf,
  verdictOf,
  type DetectorSpec,
  type DetectorType,
  type Finding,
  type GuardrailAction,
  type TextVerdict,
} from './detectors';
export { MAX_PATTERN_LENGTH, MAX_WORD_LENGTH, MAX_WORDS } from './patterns';
export { findSecrets, REDACTED, redactSecrets } from './secrets';
export type { Span } from './span';
export { STREAM_WINDOW_CHARS, WindowScanner } from './stream-window';
export {
  checkGuardrailConfig,
  checkSides,
  GUARDRAIL_KINDS,
  GUARDRAIL_SIDES,
  MAX_DETECTORS,
  WEBHOOK_TIMEOUT_MS,
  type DetectorsConfig,
  type GuardrailConfig,
  type GuardrailKind,
  type GuardrailSide,
  type JudgeConfig,
  type WebhookConfig,
} from './config';
