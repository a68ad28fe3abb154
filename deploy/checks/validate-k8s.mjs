// Checks rendered Kubernetes manifests against the API's OpenAPI schemas (kubernetes-models, the same
// schemas kubeconform uses). Usage: kubectl kustomize deploy/k8s/overlays/prod | node deploy/checks/validate-k8s.mjs
// Prints one line per problem and exits 1 when there is any; objects of an unknown kind are problems too.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

const CORE_GROUP = '';

async function modelFor(apiVersion, kind) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : [CORE_GROUP, apiVersion];
  const path =
    group === CORE_GROUP ? `kubernetes-models/${version}/${kind}` : `kubernetes-models/${group}/${version}/${kind}`;
  try {
    return (await import(path))[kind];
  } catch {
    return undefined;
  }
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
