import type { Logger } from '@sbc/logging';
import type { Prisma, Project as ProjectRow } from '../generated/prisma/client';
import { withRunEvents, type EventWriter, type RunEventType, type StoredEvent, type Tx } from '../store/events';
import { usageOf, type Outcome, type RunRow, type RunUsage } from '../store/runs';
import type { Egress } from '../tools/egress';
import { runTool, TOOL_DEFINITIONS } from '../tools/tools';
import { callModel, ModelCallError, type ChatMessage } from './model-call';

/** Another worker holds the run now (this one's lease ran out): stop without writing anything more. */
export class LeaseLost extends Error {
  constructor() {
    super('the run is held by another worker now');
    this.name = 'LeaseLost';
  }
}

export interface LoopDeps {
  writer: EventWriter;
  egress: Egress;
  logger: Logger;
  budget: { maxSteps: number; maxDurationMs: number };
  fetchTimeoutMs: number;
  /** The edge's address, read at each model call (embedded mode learns it only once the edge listens). */
  gatewayUrl: () => string;
}

/** A run as its worker holds it. `usage` is kept current so a cancel can settle with what was spent. */
export interface HeldRun {
  run: RunRow;
  holder: string;
  /** The run's model-call key (`gateway:invoke` only); its secret lives only in this worker's memory. */
  keySecret: string;
  signal: AbortSignal;
  usage: RunUsage;
}

// message.delta events are written in batches: one per this many characters or milliseconds of text.
const DELTA_FLUSH_CHARS = 200;
const DELTA_FLUSH_MS = 250;
// What a tool.result event shows of the output (the model reads all of it).
const RESULT_PREVIEW_CHARS = 4_000;

type Append = (type: RunEventType, data: Record<string, unknown>) => Promise<StoredEvent>;

/**
 * Writes the held run's events (and optional run columns) in one transaction, only while this worker still
 * holds the lease; otherwise throws LeaseLost and writes nothing.
 */
export function writeHeld<T>(
  deps: Pick<LoopDeps, 'writer'>,
  held: Pick<HeldRun, 'run' | 'holder'>,
  work: (tx: Tx, append: Append) => Promise<T>,
  columns: Prisma.RunUpdateManyMutationInput = {},
): Promise<T> {
  return withRunEvents(deps.writer, held.run.id, async (tx, append) => {
    const { count } = await tx.run.updateMany({
      where: { id: held.run.id, status: 'running', leaseOwner: held.holder },
      data: { ...columns, heartbeatAt: new Date() },
    });
    if (count === 0) throw new LeaseLost();
    return work(tx, append);
  });
}

function initialMessages(project: ProjectRow, prompt: string): ChatMessage[] {
  const system = [
    "You are an agent working in a project's workspace. Use the tools to list, read and write its files and to fetch " +
      'URLs; answer with your final result when done.',
    project.instructions ? `Project instructions:\n${project.instructions}` : '',
  ]
    .filter(Boolean)
    .join('\n\n');
  return [
    { role: 'system', content: system },
    { role: 'user', content: prompt },
  ];
}

/**
 * Streams one model call, writing its text as message.delta events in small batches (in order: each batch
 * waits for the one before it).
 */
async function modelStep(deps: LoopDeps, held: HeldRun, step: number, messages: ChatMessage[], signal: AbortSignal) {
  let pending = '';
  let timer: NodeJS.Timeout | undefined;
  let writes: Promise<unknown> = Promise.resolve();
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (!pending) return;
    const text = pending;
    pending = '';
    writes = writes.then(() => writeHeld(deps, held, (_tx, append) => append('message.delta', { step, text })));
  };
  try {
    const turn = await callModel({
      gatewayUrl: deps.gatewayUrl(),
      key: held.keySecret,
      model: held.run.model,
      messages,
      tools: TOOL_DEFINITIONS,
      signal,
      onText(delta) {
        pending += delta;
        if (pending.length >= DELTA_FLUSH_CHARS) flush();
        else timer ??= setTimeout(flush, DELTA_FLUSH_MS);
      },
    });
    flush();
    await writes;
    return turn;
  } finally {
    clearTimeout(timer);
    // A failed batch write (LeaseLost) surfaces through `writes`; after an abort it is not awaited.
    writes.catch(() => undefined);
  }
}

/**
 * The agent loop of one held run: model call, then the tool calls it asked for, until it answers without
 * tools (succeeded) or a budget runs out (failed). The transcript is checkpointed on the run after every step,
 * so a run recovered by another worker continues from its last whole step. Throws when `held.signal` aborts
 * (cancel, lost lease, shutdown) or the lease is lost; the caller settles or releases the run.
 */
export async function runAgentLoop(deps: LoopDeps, held: HeldRun): Promise<Outcome> {
  const { run } = held;
  const project = await deps.writer.db.project.findUniqueOrThrow({ where: { id: run.projectId } });
  const messages: ChatMessage[] = Array.isArray(run.transcript)
    ? (run.transcript as unknown as ChatMessage[])
    : initialMessages(project, run.prompt);
  const usage = held.usage;
  Object.assign(usage, usageOf(run));
  const deadline = (run.startedAt ?? new Date()).getTime() + deps.budget.maxDurationMs;
  const timeBudgetSpent = (): Outcome => ({
    status: 'failed',
    error: {
      code: 'time_budget_exhausted',
      message: `The run did not finish within ${deps.budget.maxDurationMs / 1000} s.`,
    },
    usage,
  });

  for (;;) {
    if (usage.steps >= deps.budget.maxSteps) {
      return {
        status: 'failed',
        error: {
          code: 'step_budget_exhausted',
          message: `The run did not finish within ${deps.budget.maxSteps} steps.`,
        },
        usage,
      };
    }
    const remainingMs = deadline - Date.now();
    if (remainingMs <= 0) return timeBudgetSpent();
    usage.steps += 1;
    usage.model_calls += 1;
    const step = usage.steps;
    const timeLimit = AbortSignal.timeout(remainingMs);
    let turn;
    try {
      turn = await modelStep(deps, held, step, messages, AbortSignal.any([held.signal, timeLimit]));
    } catch (error) {
      if (held.signal.aborted) throw error;
      if (timeLimit.aborted) return timeBudgetSpent();
      if (error instanceof ModelCallError)
        return { status: 'failed', error: { code: error.code, message: error.message }, usage };
      throw error;
    }
    usage.input_tokens += turn.inputTokens;
    usage.output_tokens += turn.outputTokens;
    if (turn.toolCalls.length === 0) return { status: 'succeeded', output: turn.text, usage };

    messages.push({
      role: 'assistant',
      content: turn.text || null,
      tool_calls: turn.toolCalls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      })),
    });
    for (const [index, call] of turn.toolCalls.entries()) {
      await writeHeld(deps, held, (_tx, append) =>
        append('tool.call', { step, call_id: call.id, name: call.name, arguments: call.arguments }),
      );
      const result = await runTool(
        {
          db: deps.writer.db,
          egress: deps.egress,
          runId: run.id,
          projectId: run.projectId,
          fetchTimeoutMs: deps.fetchTimeoutMs,
          signal: held.signal,
          dialAs: (run.caller as { operator?: boolean } | null)?.operator === true ? 'operator' : 'tenant',
        },
        call.name,
        call.arguments,
      );
      usage.tool_calls += 1;
      messages.push({ role: 'tool', tool_call_id: call.id, content: result.output });
      const last = index === turn.toolCalls.length - 1;
      await writeHeld(
        deps,
        held,
        (_tx, append) =>
          append('tool.result', {
            step,
            call_id: call.id,
            name: call.name,
            ok: result.ok,
            output: result.output.slice(0, RESULT_PREVIEW_CHARS),
          }),
        // The step is whole once its last result is in: checkpoint it with that event.
        last ? { transcript: messages as unknown as Prisma.InputJsonArray, usage: { ...usage } } : {},
      );
    }
  }
}
