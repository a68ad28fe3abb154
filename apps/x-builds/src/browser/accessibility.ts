import type { AccessibilityFinding } from '../store/jobs';

/** What axe-core reports per violated rule (the fields used here). */
export interface AxeViolation {
  id: string;
  impact?: string | null;
  help: string;
  nodes: unknown[];
}

/** Impacts that send a build to fixing, like an error does; milder ones are recorded and the build goes on. */
const BLOCKING = new Set(['serious', 'critical']);

/** axe-core's violations split into what blocks the build and what is only recorded, most affected first. */
export function splitViolations(violations: AxeViolation[]): {
  blocking: AccessibilityFinding[];
  recorded: AccessibilityFinding[];
} {
  const findings = violations
    .map((violation) => ({
      rule: violation.id,
      impact: violation.impact ?? 'minor',
      help: violation.help,
      nodes: violation.nodes.length,
    }))
    .sort((a, b) => b.nodes - a.nodes || a.rule.localeCompare(b.rule));
  return {
    blocking: findings.filter((f) => BLOCKING.has(f.impact)),
    recorded: findings.filter((f) => !BLOCKING.has(f.impact)),
  };
}

/** One line for the fixing stage's prompt and the check's detail. */
export const describeFindings = (findings: AccessibilityFinding[]): string =>
  findings.map((f) => `${f.rule} (${f.impact}, ${f.nodes} element${f.nodes === 1 ? '' : 's'}): ${f.help}`).join('; ');
