// Checks rendered Kubernetes manifests against the API's OpenAPI schemas (kubernetes-models, the same
// schemas kubeconform uses). Usage: kubectl kustomize deploy/k8s/overlays/prod | node deploy/checks/validate-k8s.mjs
// Prints one line per problem and exits 1 when there is any; objects of an unknown kind are problems too.
import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import { parseAllDocuments } from 'yaml';

const CORE_GROUP = '';

const int32 = { type: 'integer', minimum: 0, maximum: 2147483647 };
const stringMap = { type: 'object', additionalProperties: { type: 'string' } };
/**
 * The custom resources the manifests use, which kubernetes-models has no model for: each checked against the
 * part of its CRD's OpenAPI schema that the manifests set (required fields, types, no unknown field at the
 * levels written here), by name, so any other custom kind stays an unknown kind. KEDA's ScaledObject is from
 * its CRD `scaledobjects.keda.sh` (v2.x); the `@kubernetes-models/keda` package would carry the full schema.
 * The Prometheus Operator's PrometheusRule is from its CRD `prometheusrules.monitoring.coreos.com` (v1): groups
 * with a name and rules, each rule an `alert` or a `record` with an `expr`, `for` a duration.
 */
const CUSTOM_RESOURCES = {
  'keda.sh/v1alpha1/ScaledObject': {
    type: 'object',
    required: ['apiVersion', 'kind', 'metadata', 'spec'],
    properties: {
      metadata: { type: 'object', required: ['name'] },
      spec: {
        type: 'object',
        required: ['scaleTargetRef', 'triggers'],
        additionalProperties: false,
        properties: {
          scaleTargetRef: {
            type: 'object',
            required: ['name'],
            additionalProperties: false,
            properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' } },
          },
          minReplicaCount: int32,
          maxReplicaCount: int32,
          idleReplicaCount: int32,
          pollingInterval: int32,
          cooldownPeriod: int32,
          advanced: { type: 'object' },
          fallback: { type: 'object' },
          triggers: {
            type: 'array',
            minItems: 1,
            items: {
              type: 'object',
              required: ['type', 'metadata'],
              additionalProperties: false,
              properties: {
                type: { type: 'string' },
                name: { type: 'string' },
                metadata: stringMap,
                authenticationRef: { type: 'object', required: ['name'] },
                metricType: { enum: ['AverageValue', 'Value', 'Utilization'] },
              },
            },
          },
        },
      },
    },
  },
};
const duration = {
  type: 'string',
  pattern: '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$',
};
CUSTOM_RESOURCES['monitoring.coreos.com/v1/PrometheusRule'] = {
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  properties: {
    metadata: { type: 'object', required: ['name'] },
    spec: {
      type: 'object',
      additionalProperties: false,
      properties: {
        groups: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name', 'rules'],
            additionalProperties: false,
            properties: {
              name: { type: 'string', minLength: 1 },
              interval: duration,
              limit: int32,
              partial_response_strategy: { type: 'string' },
              rules: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['expr'],
                  additionalProperties: false,
                  oneOf: [{ required: ['alert'] }, { required: ['record'] }],
                  properties: {
                    alert: { type: 'string', minLength: 1 },
                    record: { type: 'string', minLength: 1 },
                    expr: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'integer' }] },
                    for: duration,
                    keep_firing_for: duration,
                    labels: stringMap,
                    annotations: stringMap,
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};
const ajv = new Ajv({ allErrors: true });

async function modelFor(apiVersion, kind) {
  const custom = CUSTOM_RESOURCES[`${apiVersion}/${kind}`];
  if (custom) return customModel(ajv.compile(custom));
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : [CORE_GROUP, apiVersion];
  const path =
    group === CORE_GROUP ? `kubernetes-models/${version}/${kind}` : `kubernetes-models/${group}/${version}/${kind}`;
  try {
    return (await import(path))[kind];
  } catch {
    return undefined;
  }
}

/** A model-like validator over a JSON schema: `validate()` throws with the schema's complaints. */
function customModel(validate) {
  return class {
    constructor(object) {
      this.object = object;
    }
    validate() {
      if (!validate(this.object))
        throw new Error(validate.errors.map((error) => `${error.instancePath || '/'} ${error.message}`).join('; '));
    }
  };
}

const documents = parseAllDocuments(readFileSync(process.argv[2] ?? 0, 'utf8'));
const problems = [];
let checked = 0;
for (const document of documents) {
  if (document.errors.length > 0) {
    problems.push(`YAML: ${document.errors[0].message}`);
    continue;
  }
  const object = document.toJS();
  if (!object) continue;
  // kustomize folds long base64 values over several lines; the API server's decoder skips the newlines.
  if (object.kind === 'Secret' && object.data) {
    for (const [key, value] of Object.entries(object.data)) object.data[key] = String(value).replace(/\s+/g, '');
  }
  const name = `${object.kind ?? '?'}/${object.metadata?.name ?? '?'}`;
  const Model = object.apiVersion && object.kind ? await modelFor(object.apiVersion, object.kind) : undefined;
  if (!Model) {
    problems.push(`${name}: unknown apiVersion/kind ${object.apiVersion}/${object.kind}`);
    continue;
  }
  try {
    new Model(object).validate();
    checked += 1;
  } catch (error) {
    problems.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
for (const problem of problems) console.log(problem);
console.log(`${checked} objects valid, ${problems.length} problems`);
process.exit(problems.length > 0 ? 1 : 0);
