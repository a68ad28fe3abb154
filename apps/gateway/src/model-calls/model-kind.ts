import { findCatalogModel, modelKindOf, type CatalogModel } from '@sbc/catalog';
import { ApiError } from '@sbc/errors';
import type { Target } from '../routing/targets';
import { bodyOf, type CallerCall } from './plan';

/**
 * What the catalog knows of a target's model that decides whether this route can call it at all: a chat model
 * on `/v1/embeddings` (or an embedding model on a chat route) is the caller's mistake, a 400 before any engine
 * is dialled; so is an embedding `dimensions` the model cannot give. A model the catalog does not list (one on
 * the caller's own endpoint) is left to its engine.
 */
function mismatch(call: CallerCall, model: CatalogModel): string | undefined {
  const kind = modelKindOf(model);
  if (kind !== call.adapter.modelKind) {
    return kind === 'embedding'
      ? `${model.id} is an embedding model: call it on POST /v1/embeddings.`
      : `${model.id} is a chat model, which makes no embeddings; name an embedding model (GET /v1/models gives each ` +
          "model's kind).";
  }
  const { embedding } = model;
  const dimensions = embedding ? bodyOf(call).dimensions : undefined;
  if (!embedding || typeof dimensions !== 'number' || dimensions === embedding.dimensions) return undefined;
  if (!embedding.adjustable_dimensions)
    return `${model.id} always answers ${embedding.dimensions} dimensions; it takes no other dimensions.`;
  if (dimensions > embedding.dimensions)
    return `dimensions is ${dimensions}; ${model.id} answers at most ${embedding.dimensions}.`;
  return undefined;
}

/** Throws the 400 for the first target whose model this call cannot use (`param`: the field that named it). */
export function checkModelKind(call: CallerCall, targets: readonly Target[]): void {
  for (const target of targets) {
    const model = findCatalogModel(target.catalogId ?? target.engine.model);
    const message = model && mismatch(call, model);
    if (!message) continue;
    const kindMismatch = modelKindOf(model) !== call.adapter.modelKind;
    // The model named, or one of the fallbacks (`models`), which replies name as the model that answered.
    const path = !kindMismatch ? 'dimensions' : target.callerModel === call.callerModel ? 'model' : 'models';
    throw ApiError.invalid([{ path, code: 'invalid_value', message }]);
  }
}
