import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** A quick start as shown on the page: the file the test suite runs, verbatim. */
export interface QuickStart {
  id: string;
  title: string;
  file: string;
  text: string;
}

/** In page order; each file is under docs/quickstarts and is run against the embedded stack by the tests. */
const QUICK_STARTS: readonly { id: string; title: string; file: string }[] = [
  { id: 'quickstart-curl', title: 'curl', file: 'curl.sh' },
  { id: 'quickstart-openai', title: 'OpenAI SDK (openai)', file: 'openai.mjs' },
  { id: 'quickstart-anthropic', title: 'Anthropic SDK (@anthropic-ai/sdk)', file: 'anthropic.mjs' },
  { id: 'quickstart-vercel-ai', title: 'Vercel AI SDK (ai)', file: 'vercel-ai.mjs' },
  { id: 'quickstart-langchain', title: 'LangChain JS (@langchain/openai)', file: 'langchain.mjs' },
  { id: 'quickstart-custom-endpoint', title: 'Add a custom endpoint', file: 'add-endpoint.sh' },
];

/**
 * Where the quick starts are: beside the bundle in an image (`./quickstarts`), or the workspace's
 * docs/quickstarts when the edge runs from source or from dist.
 */
function findQuickStartDir(
  candidates = [path.join(__dirname, 'quickstarts'), path.resolve('docs', 'quickstarts')],
): string | undefined {
  return candidates.find((dir) => existsSync(path.join(dir, QUICK_STARTS[0]!.file)));
}

export function loadQuickStarts(dir = findQuickStartDir()): QuickStart[] {
  if (!dir) return [];
  return QUICK_STARTS.filter((q) => existsSync(path.join(dir, q.file))).map((q) => ({
    ...q,
    text: readFileSync(path.join(dir, q.file), 'utf8'),
  }));
}
