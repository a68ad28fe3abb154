import { DETECTOR_TYPES, detectorIssues, GUARDRAIL_ACTIONS, type DetectorSpec } from './detectors';

// A guardrail's settings by kind, checked where guardrails are saved (the account service) and read where they run
// (the edge). Every problem is reported with the path of its field, at once.

export const GUARDRAIL_KINDS = ['detectors', 'webhook', 'judge'] as const;
export type GuardrailKind = (typeof GUARDRAIL_KINDS)[number];
export const GUARDRAIL_SIDES = ['request', 'reply'] as const;
export type GuardrailSide = (typeof GUARDRAIL_SIDES)[number];

export const MAX_DETECTORS = 20;
export const WEBHOOK_TIMEOUT_MS = { min: 100, max: 10_000, default: 2_000 };
/** A judge's bounds: the most it may answer with, and how long its call may take. */
const JUDGE_MAX_TOKENS = { min: 1, max: 1_024, default: 64 };
const JUDGE_TIMEOUT_MS = { min: 100, max: 30_000, default: 5_000 };
const MAX_JUDGE_QUESTION = 2_000;
/** The house model a judge asks when it names none. */
const JUDGE_DEFAULT_MODEL = 'house';

export interface DetectorsConfig {
  detectors: DetectorSpec[];
}
export interface WebhookConfig {
  url: string;
  timeout_ms: number;
  /** What a webhook that does not answer in time, or answers with an error, means: let the call go, or block it. */
  fail: 'open' | 'closed';
}
/** A model asked a yes/no question about the call; a yes blocks it. */
export interface JudgeConfig {
  model: string;
  question: string;
  max_tokens: number;
  timeout_ms: number;
  /** What a judge that fails (no answer in time, an error, an answer that is neither yes nor no) means. */
  fail: 'open' | 'closed';
}
export type GuardrailConfig = DetectorsConfig | WebhookConfig | JudgeConfig;

type Issue = { path: string; message: string };

/** The settings of `kind` with their defaults filled in, or every problem with them. */
export function checkGuardrailConfig(
  kind: string,
  value: unknown,
): { config: GuardrailConfig; issues: [] } | { issues: Issue[] } {
  if (!(GUARDRAIL_KINDS as readonly string[]).includes(kind))
    return { issues: [{ path: 'kind', message: `kind must be one of ${GUARDRAIL_KINDS.join(', ')}.` }] };
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { issues: [{ path: 'config', message: 'The settings must be an object.' }] };
  const record = value as Record<string, unknown>;
  if (kind === 'detectors') return checkDetectors(record.detectors);
  if (kind === 'judge') return checkJudge(record);
  return checkWebhook(record);
}

function checkDetectors(value: unknown): { config: DetectorsConfig; issues: [] } | { issues: Issue[] } {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_DETECTORS)
    return { issues: [{ path: 'detectors', message: `detectors must be a list of 1 to ${MAX_DETECTORS}.` }] };
  const issues: Issue[] = [];
  const detectors: DetectorSpec[] = [];
  value.forEach((item: unknown, index) => {
    const spec = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    if (!(DETECTOR_TYPES as readonly unknown[]).includes(spec.type))
      issues.push({ path: `detectors.${index}.type`, message: `type must be one of ${DETECTOR_TYPES.join(', ')}.` });
    if (!(GUARDRAIL_ACTIONS as readonly unknown[]).includes(spec.action))
      issues.push({
        path: `detectors.${index}.action`,
        message: `action must be one of ${GUARDRAIL_ACTIONS.join(', ')}.`,
      });
    if (spec.pattern !== undefined && typeof spec.pattern !== 'string')
      issues.push({ path: `detectors.${index}.pattern`, message: 'pattern must be a string.' });
    if (spec.words !== undefined && (!Array.isArray(spec.words) || spec.words.some((word) => typeof word !== 'string')))
      issues.push({ path: `detectors.${index}.words`, message: 'words must be a list of strings.' });
    detectors.push({
      type: spec.type as DetectorSpec['type'],
      action: spec.action as DetectorSpec['action'],
      ...(spec.pattern === undefined ? {} : { pattern: spec.pattern as string }),
      ...(spec.words === undefined ? {} : { words: spec.words as string[] }),
    });
  });
  if (issues.length === 0) issues.push(...detectorIssues(detectors));
  return issues.length > 0 ? { issues } : { config: { detectors }, issues: [] };
}

function checkWebhook(record: Record<string, unknown>): { config: WebhookConfig; issues: [] } | { issues: Issue[] } {
  const issues: Issue[] = [];
  let url: URL | undefined;
  try {
    url = typeof record.url === 'string' && record.url.length <= 2048 ? new URL(record.url) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password)
    issues.push({
      path: 'url',
      message: 'url must be an http(s) URL of at most 2048 characters, without credentials.',
    });
  const timeout = wholeNumber(record, 'timeout_ms', WEBHOOK_TIMEOUT_MS, issues);
  const fail = failOf(record, issues);
  if (issues.length > 0) return { issues };
  return { config: { url: url!.toString(), timeout_ms: timeout, fail }, issues: [] };
}

function checkJudge(record: Record<string, unknown>): { config: JudgeConfig; issues: [] } | { issues: Issue[] } {
  const issues: Issue[] = [];
  const model = record.model ?? JUDGE_DEFAULT_MODEL;
  if (typeof model !== 'string' || model.length < 1 || model.length > 200)
    issues.push({ path: 'model', message: 'model must be a model id of 1 to 200 characters.' });
  const question = typeof record.question === 'string' ? record.question.trim() : '';
  if (question.length < 1 || question.length > MAX_JUDGE_QUESTION)
    issues.push({ path: 'question', message: `question must be 1 to ${MAX_JUDGE_QUESTION} characters.` });
  const maxTokens = wholeNumber(record, 'max_tokens', JUDGE_MAX_TOKENS, issues);
  const timeout = wholeNumber(record, 'timeout_ms', JUDGE_TIMEOUT_MS, issues);
  const fail = failOf(record, issues);
  if (issues.length > 0) return { issues };
  return {
    config: { model: model as string, question, max_tokens: maxTokens, timeout_ms: timeout, fail },
    issues: [],
  };
}

/** A whole-number setting within its bounds, its default when left out. */
function wholeNumber(
  record: Record<string, unknown>,
  field: string,
  bounds: { min: number; max: number; default: number },
  issues: Issue[],
): number {
  const value = record[field] ?? bounds.default;
  if (typeof value === 'number' && Number.isInteger(value) && value >= bounds.min && value <= bounds.max) return value;
  issues.push({ path: field, message: `${field} must be a whole number from ${bounds.min} to ${bounds.max}.` });
  return bounds.default;
}

/** Whether a guardrail that cannot decide lets the call go (`open`) or blocks it (`closed`, the default). */
function failOf(record: Record<string, unknown>, issues: Issue[]): 'open' | 'closed' {
  const fail = record.fail ?? 'closed';
  if (fail === 'open' || fail === 'closed') return fail;
  issues.push({ path: 'fail', message: 'fail must be open or closed.' });
  return 'closed';
}

/** The sides a guardrail checks, as saved: both when none is named. */
export function checkSides(value: readonly string[]): { sides: GuardrailSide[] } | { issues: Issue[] } {
  if (value.some((side) => !(GUARDRAIL_SIDES as readonly string[]).includes(side)))
    return { issues: [{ path: 'applies_to', message: 'applies_to may hold request and reply.' }] };
  const sides = GUARDRAIL_SIDES.filter((side) => value.length === 0 || value.includes(side));
  return { sides };
}
