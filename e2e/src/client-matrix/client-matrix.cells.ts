/**
 * The client compatibility matrix's definition (issue 17): each cell is one client call on one edge route,
 * run against every target. The test (client-matrix.int.test.ts) runs them; the README's "Works with" table
 * is rendered from this same list (client-matrix.table.ts), so the table cannot claim a cell that does not run.
 *
 * Every conversation uses the simulator's rules (apps/sim-upstream/README.md): a declared tool is called when
 * the last user turn mentions the weather, and a tool result as the last turn is answered in text.
 */

export type TargetName = 'house' | 'openai-endpoint' | 'anthropic-endpoint';

/** Where a cell's calls go: the model id a caller names, and which upstream dialect the edge speaks to it. */
export interface Target {
  name: TargetName;
  /** The README column. */
  label: string;
  model: string;
  /** How `GET /v1/models` lists it: an endpoint's models by their own ids. */
  listedAs: string;
  /** The embedding model a caller names on the same target. */
  embeddingModel: string;
}

export interface CellContext {
  target: TargetName;
  /** The edge's origin, e.g. `http://127.0.0.1:1234`. */
  edgeUrl: string;
  apiKey: string;
  model: string;
  listedAs: string;
  embeddingModel: string;
}

/** A call the edge refuses on purpose; the cell checks the refusal is clear and in the caller's dialect. */
export interface Refusal {
  targets: readonly TargetName[];
  /** The README's words for it. */
  why: string;
}

export interface Cell {
  client: string;
  /** The edge route it uses. */
  route:
    | '/v1/chat/completions'
    | '/v1/responses'
    | '/v1/messages'
    | '/v1/messages/count_tokens'
    | '/v1/models'
    | '/v1/embeddings';
  call: string;
  streams: boolean;
  tools: boolean;
  /** Makes the calls and checks the answers; for a refused target, checks the refusal instead. */
  run(ctx: CellContext): Promise<void>;
  refusal?: Refusal;
}

export const QUESTION = 'What is the weather in Paris?';
export const TOOL_RESULT = 'Sunny and 21 degrees';
export const WEATHER_SCHEMA = {
  type: 'object' as const,
  properties: { location: { type: 'string' as const, description: 'A city' } },
  required: ['location'],
  additionalProperties: false,
};

/** The text a target answers with after the tool result came back (some clients send the result JSON-quoted). */
export const AFTER_TOOL = /Simulated reply using the tool result: \W*Sunny and 21 degrees/;
/** The text a target answers a plain question with. */
export const SIMULATED = /Simulated reply/;
