import type { RequestHandler } from 'express';
import { z } from 'zod';
import { base64Vector, embedText, SIM_EMBEDDING_DIMENSIONS } from '../generation/embedding';
import { estimateInputTokens } from '../generation/tokens';
import { SimError } from '../wire/errors';
import { parseRequest } from '../wire/requests';
import { beginCall, type RouteDeps } from './call';

/** OpenAI Embeddings: `POST /v1/embeddings`, answered for any model id with deterministic unit vectors. */

const token = z.number().int().min(0);
const embeddingsRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([
    z.string().min(1),
    z.array(z.string().min(1)).min(1).max(2048),
    z.array(token).min(1).max(2048),
    z.array(z.array(token).min(1)).min(1).max(2048),
  ]),
  dimensions: z.number().int().min(1).nullish(),
  encoding_format: z.enum(['float', 'base64']).nullish(),
  user: z.string().nullish(),
});

/** Each input as the text its vector is made from, and its token count (given tokens count one each). */
function inputsOf(input: z.infer<typeof embeddingsRequestSchema>['input']): Array<{ text: string; tokens: number }> {
  if (typeof input === 'string') return [{ text: input, tokens: estimateInputTokens(input) }];
  if (input.every((item) => typeof item === 'number')) return [{ text: JSON.stringify(input), tokens: input.length }];
  return input.map((item) =>
    typeof item === 'string'
      ? { text: item, tokens: estimateInputTokens(item) }
      : { text: JSON.stringify(item), tokens: item.length },
  );
}

export function embeddingsRoute(deps: RouteDeps): RequestHandler {
  return async (req, res) => {
    const body = parseRequest(embeddingsRequestSchema, req.body, 'openai');
    const dimensions = body.dimensions ?? SIM_EMBEDDING_DIMENSIONS;
    if (dimensions > SIM_EMBEDDING_DIMENSIONS)
      throw new SimError(
        400,
        `dimensions is ${dimensions}; this model answers at most ${SIM_EMBEDDING_DIMENSIONS}.`,
        'dimensions',
      );
    const call = await beginCall(body.model, 'openai', res, deps);
    if (!call) return;
    const inputs = inputsOf(body.input);
    const promptTokens = inputs.reduce((sum, input) => sum + input.tokens, 0);
    res.json({
      object: 'list',
      data: inputs.map((input, index) => {
        const vector = embedText(input.text, dimensions);
        return {
          object: 'embedding',
          index,
          embedding: body.encoding_format === 'base64' ? base64Vector(vector) : vector,
        };
      }),
      model: body.model,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    });
  };
}
