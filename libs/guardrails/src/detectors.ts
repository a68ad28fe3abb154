import { patternFinder, patternProblem, wordsFinder, wordsProblem } from './patterns';
import { findCards, findEmails, findIbans, findPhones } from './scanners';
import { findSecrets } from './secrets';
import type { Span } from './span';

export const DETECTOR_TYPES = ['email', 'phone', 'card', 'iban', 'secret', 'regex', 'words'] as const;
export type DetectorType = (typeof DETECTOR_TYPES)[number];
export const GUARDRAIL_ACTIONS = ['block', 'redact', 'log'] as const;
export type GuardrailAction = (typeof GUARDRAIL_ACTIONS)[number];

/** A detector as a guardrail stores it. */
export interface DetectorSpec {
  type: DetectorType;
  action: GuardrailAction;
  /** `regex` only: an RE2 pattern. */
  pattern?: string;
  /** `words` only: words or phrases, matched whole and ignoring case. */
  words?: readonly string[];
}

/** One detector's finding in a text: never the text itself, only what and where. */
export interface Finding extends Span {
  type: DetectorType;
  action: GuardrailAction;
  /** Which of several detector sets found it (their caller's index: a guardrail), when the caller says. */
  owner?: number;
}

/** What a set of detectors made of one text. */
export interface TextVerdict {
  /** The text with every `redact` finding replaced by its placeholder (the text itself when there was none). */
  text: string;
  /** The first `block` finding, when there was one. */
  block?: Finding;
  /** The `redact` findings replaced, and the `log` findings left in place. */
  redactions: Finding[];
  logs: Finding[];
}

/** A detector's finder: `lower` gives the text lower-cased, made once for every detector of a set that reads it. */
type Finder = (text: string, lower: () => string) => Span[];

interface Compiled {
  type: DetectorType;
  action: GuardrailAction;
  find: Finder;
}

/** Every problem of a list of detectors, each with the path of its field (`detectors.2.pattern`). */
export function detectorIssues(specs: readonly DetectorSpec[]): Array<{ path: string; message: string }> {
  const issues: Array<{ path: string; message: string }> = [];
  specs.forEach((spec, index) => {
    const at = `detectors.${index}`;
    if (spec.type === 'regex') {
      const problem =
        spec.pattern === undefined ? 'pattern is required for a regex detector.' : patternProblem(spec.pattern);
      if (problem) issues.push({ path: `${at}.pattern`, message: problem });
    } else if (spec.pattern !== undefined)
      issues.push({ path: `${at}.pattern`, message: 'pattern is for regex detectors only.' });
    if (spec.type === 'words') {
      const problem = spec.words === undefined ? 'words is required for a words detector.' : wordsProblem(spec.words);
      if (problem) issues.push({ path: `${at}.words`, message: problem });
    } else if (spec.words !== undefined)
      issues.push({ path: `${at}.words`, message: 'words is for words detectors only.' });
  });
  return issues;
}

/** The placeholder a `redact` finding of `type` is replaced with. */
export function placeholderOf(type: DetectorType): string {
  return `[REDACTED:${type}]`;
}

/**
 * A guardrail's detectors, compiled once (when the guardrail reaches the edge) and applied to any number of texts.
 * Applying them is pure and linear in the text for every detector.
 */
export class DetectorSet {
  private readonly detectors: Compiled[];

  constructor(specs: readonly DetectorSpec[]) {
    this.detectors = specs.map((spec) => ({ type: spec.type, action: spec.action, find: finderOf(spec) }));
  }

  /** Every finding in `text`, in no particular order; findings may overlap. `owner` is set on each when given. */
  findings(text: string, owner?: number): Finding[] {
    const found: Finding[] = [];
    let lowered: string | undefined;
    const lower = () => (lowered ??= text.toLowerCase());
    for (const detector of this.detectors)
      for (const span of detector.find(text, lower)) {
        const finding: Finding = { ...span, type: detector.type, action: detector.action };
        if (owner !== undefined) finding.owner = owner;
        found.push(finding);
      }
    return found;
  }

  apply(text: string): TextVerdict {
    return verdictOf(text, this.findings(text));
  }
}

/** `text` under `findings`: blocked by the first block, redactions replaced (overlapping ones merged), logs noted. */
export function verdictOf(text: string, findings: readonly Finding[]): TextVerdict {
  const verdict: TextVerdict = { text, redactions: [], logs: [] };
  if (findings.length === 0) return verdict;
  verdict.block = findings.find((finding) => finding.action === 'block');
  const redactions = findings.filter((finding) => finding.action === 'redact').sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const finding of redactions) {
    if (finding.end <= at) continue;
    if (finding.start >= at) out += text.slice(at, finding.start) + placeholderOf(finding.type);
    at = finding.end;
    verdict.redactions.push(finding);
  }
  if (redactions.length > 0) verdict.text = out + text.slice(at);
  verdict.logs = findings.filter((finding) => finding.action === 'log');
  return verdict;
}

function finderOf(spec: DetectorSpec): Finder {
  switch (spec.type) {
    case 'email':
      return findEmails;
    case 'phone':
      return findPhones;
    case 'card':
      return findCards;
    case 'iban':
      return findIbans;
    case 'secret':
      return (text, lower) => findSecrets(text, lower());
    case 'regex':
      return patternFinder(spec.pattern ?? '');
    case 'words': {
      const find = wordsFinder(spec.words ?? []);
      return (text, lower) => find(text, lower());
    }
  }
}
