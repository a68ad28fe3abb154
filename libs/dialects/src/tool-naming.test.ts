import fc from 'fast-check';
import type { ToolDefinition } from './ir';
import { createToolNaming, declaredTools, freeFormInput, openAiToolName } from './tool-names';

/** A name as callers write them: mostly the common charset, sometimes dots or spaces, sometimes long. */
const toolName = fc.oneof(
  fc.stringMatching(/^[a-z_][a-z0-9_-]{0,20}$/),
  fc.stringMatching(/^[A-Za-z0-9_.:-]{1,80}$/),
  fc.constantFrom('wait_agent', 'spawn_agent', 'multi_agent_v1__wait_agent', 'a__b', 'a', 'b'),
);

/** Top-level names, then namespaced (namespace, name) pairs, as one request declares them. */
const declarations = fc.record({
  topLevel: fc.uniqueArray(toolName, { maxLength: 8 }),
  namespaced: fc.uniqueArray(fc.tuple(toolName, toolName), {
    maxLength: 12,
    selector: ([namespace, name]) => `${namespace}\u0000${name}`,
  }),
});

/** The neutral tools of such a request: flat names from one naming, `declared` on the namespaced ones. */
function toolsOf({ topLevel, namespaced }: { topLevel: string[]; namespaced: Array<[string, string]> }) {
  const naming = createToolNaming(topLevel);
  const tools: ToolDefinition[] = topLevel.map((name) => ({ name }));
  for (const [namespace, name] of namespaced)
    tools.push({ name: naming.flatName(namespace, name), declared: { name, namespace, kind: 'function' } });
  return { tools, naming };
}

describe('flattened tool names (namespace tools offered as plain functions)', () => {
  it('never collide with each other or with a top-level name as the target sees it, and always map back', () => {
    fc.assert(
      fc.property(declarations, (request) => {
        const { tools } = toolsOf(request);
        const flat = tools.filter((tool) => tool.declared).map((tool) => tool.name);
        const seen = new Set(request.topLevel.flatMap((name) => [name, openAiToolName(name)]));
        for (const name of flat) {
          expect(seen.has(name)).toBe(false);
          seen.add(name);
          // Within every target's limits: OpenAI's 64 characters and the charset both dialects take.
          expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
          expect(openAiToolName(name)).toBe(name);
        }
        const back = declaredTools(tools);
        request.namespaced.forEach(([namespace, name], i) =>
          expect(back?.get(flat[i]!)).toEqual({ name, namespace, kind: 'function' }),
        );
      }),
    );
  });

  it('are the same for the same tool list (a definition and a replayed call agree across turns)', () => {
    fc.assert(
      fc.property(declarations, (request) => {
        const first = toolsOf(request).tools.map((tool) => tool.name);
        const again = toolsOf(request);
        expect(again.tools.map((tool) => tool.name)).toEqual(first);
        // A call in the history names the pair; it gets the name its definition got.
        for (const [i, [namespace, name]] of request.namespaced.entries())
          expect(again.naming.flatName(namespace, name)).toBe(first[request.topLevel.length + i]);
      }),
    );
  });

  it('read `<namespace>__<name>` when that is free and fits, and a hashed cut otherwise', () => {
    const naming = createToolNaming(['multi_agent_v1__spawn_agent']);
    expect(naming.flatName('multi_agent_v1', 'wait_agent')).toBe('multi_agent_v1__wait_agent');
    expect(naming.flatName('multi_agent_v1', 'spawn_agent')).toMatch(/^multi_agent_v1__spawn_agent_[0-9a-f]{8}$/);
    expect(naming.flatName('crm.v2', 'find')).toMatch(/^crm_v2__find_[0-9a-f]{8}$/);
    expect(naming.flatName('n'.repeat(40), 'f'.repeat(40))).toHaveLength(64);
  });
});

describe('free-form input from a function call', () => {
  it('is the `input` string, else the only string given, else the arguments text', () => {
    expect(freeFormInput('{"input":"*** Begin Patch"}')).toBe('*** Begin Patch');
    expect(freeFormInput('{"patch":"x"}')).toBe('x');
    expect(freeFormInput('{"a":"x","b":"y"}')).toBe('{"a":"x","b":"y"}');
    expect(freeFormInput('not json')).toBe('not json');
    expect(freeFormInput('')).toBe('');
  });
});
