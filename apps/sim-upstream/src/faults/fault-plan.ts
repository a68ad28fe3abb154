import { z } from 'zod';

/** How a call the plan picks for failure fails. */
const FAILURE_KINDS = ['429', '503', 'hang', 'reset_mid_stream', 'reset_before_first_chunk'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

const weight = z.number().min(0).max(1_000_000);

/**
 * A fault plan, as `POST /__faults` takes it. Strict: a misspelt field is refused rather than silently ignored,
 * since a bench that believes it injected faults when it did not measures nothing.
 */
const faultPlanSchema = z
  .strictObject({
    /** Share of calls that fail (0–1), once `down_for_ms` is over. */
    failure_rate: z.number().min(0).max(1).default(0),
    /** Relative weights of the ways a failing call fails; default all 503. */
    failures: z
      .strictObject({
        '429': weight.optional(),
        '503': weight.optional(),
        hang: weight.optional(),
        reset_mid_stream: weight.optional(),
        reset_before_first_chunk: weight.optional(),
      })
      .optional(),
    /** `retry-after` (seconds) sent with a 429. */
    retry_after_s: z.number().int().min(0).max(3_600).default(1),
    /** A `hang` call is accepted and answered normally after this long (unless the caller gives up first). */
    hang_ms: z.number().int().min(1).max(600_000).default(30_000),
    /** A `reset_mid_stream` call sends this many chunks (SSE frames, or a share of a JSON body) before the reset. */
    reset_after_chunks: z.number().int().min(1).max(10_000).default(1),
    /** Every call fails for this long from when the plan is set: an outage. */
    down_for_ms: z.number().int().min(0).max(3_600_000).default(0),
    /** How a call fails while down: its connection reset (a dead host's listener), or a 503. */
    down_with: z.enum(['reset', '503']).default('reset'),
    /** Seeds the choice of failing calls, for runs that must repeat; default random. */
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 32 - 1)
      .optional(),
  })
  .refine((plan) => plan.failure_rate === 0 || weightsOf(plan.failures).some(([, w]) => w > 0), {
    path: ['failures'],
    message: 'with a failure_rate above 0, at least one failure kind needs a weight above 0',
  });

export type FaultPlan = z.output<typeof faultPlanSchema>;
export type FaultPlanInput = z.input<typeof faultPlanSchema>;

/** The plan's failure kinds with their weights; a plan that names none fails with 503s. */
export function weightsOf(failures: Partial<Record<FailureKind, number>> | undefined): Array<[FailureKind, number]> {
  if (!failures || Object.keys(failures).length === 0) return [['503', 1]];
  return FAILURE_KINDS.map((kind) => [kind, failures[kind] ?? 0]);
}

export type PlanCheck = { ok: true; plan: FaultPlan } | { ok: false; message: string; param: string | null };

export function parseFaultPlan(body: unknown): PlanCheck {
  const result = faultPlanSchema.safeParse(body ?? {});
  if (result.success) return { ok: true, plan: result.data };
  const issue = result.error.issues[0];
  const param = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : null;
  const unknown = issue?.code === 'unrecognized_keys' ? ` (${issue.keys.join(', ')})` : '';
  return { ok: false, message: `Invalid fault plan: ${issue?.message ?? 'not an object'}${unknown}`, param };
}
