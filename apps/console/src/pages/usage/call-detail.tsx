import type { UsageGeneration } from '../../api/types';
import { Dialog } from '../../ui/dialog';
import { count, dateTime, ms, usd } from '../../ui/format';
import { batchLineOf, toolOf } from './call-kind';

const yesNo = (value: boolean) => (value ? 'Yes' : 'No');

/** A tool call's row: which tool of which server, how it ended; it has no tokens, cache or cost of a model call. */
function toolCallFacts(call: UsageGeneration, tool: { server: string; tool: string }): [string, string][] {
  return [
    ['Time', dateTime(call.ts)],
    ['Request id', call.request_id],
    ['Tool server', tool.server],
    ['Tool', tool.tool],
    ['Name at /mcp', call.model],
    ['Status', String(call.status)],
    ['Latency', ms(call.latency_ms)],
    ['Credits charged', count(call.credits_charged)],
    ['Key', call.key_label ?? call.key_id ?? '(session)'],
    ['Session', call.session_id ?? '—'],
  ];
}

/** Everything a request log row says about one call, as label and value. */
function factsOf(call: UsageGeneration): [string, string][] {
  const tool = toolOf(call);
  if (tool) return toolCallFacts(call, tool);
  const line = batchLineOf(call);
  return [
    ['Time', dateTime(call.ts)],
    ['Request id', call.request_id],
    ...(line ? ([['Batch', `Line ${line.line} of ${line.batchId}`]] as [string, string][]) : []),
    ['Model', call.model],
    ['Served by', call.served_by || '—'],
    ['Attempts', count(call.attempts)],
    ['Response cache', call.cache_hit ? 'Hit: replayed, not charged' : '—'],
    ['Endpoint', call.upstream || '—'],
    ['Provider', call.provider || '—'],
    ['Status', String(call.status)],
    ['Latency', ms(call.latency_ms)],
    ['Time to first token', ms(call.ttft_ms)],
    ['Streamed', yesNo(call.stream)],
    ['Tokens in', count(call.native_tokens_prompt)],
    ['Tokens out', count(call.native_tokens_completion)],
    ['Reasoning tokens', count(call.reasoning_tokens)],
    ['Cache reads', count(call.cache_read)],
    ['Cache writes', count(call.cache_write)],
    ['Cost at list price', usd(call.total_cost_usd)],
    ['Cache discount', usd(call.cache_discount)],
    ['Credits charged', count(call.credits_charged)],
    ['Your own provider key', yesNo(call.is_byok)],
    ['Key', call.key_label ?? call.key_id ?? '(session)'],
    ['Session', call.session_id ?? '—'],
  ];
}

/** One call of the request log in full. */
export function CallDetail({ call, onClose }: { call: UsageGeneration | undefined; onClose: () => void }) {
  return (
    <Dialog open={!!call} title={call && toolOf(call) ? 'Tool call details' : 'Call details'} onClose={onClose}>
      {call && (
        <>
          <dl className="facts">
            {factsOf(call).map(([label, value]) => (
              <div key={label} className="fact">
                <dt>{label}</dt>
                <dd className="breakable">{value}</dd>
              </div>
            ))}
          </dl>
          <div className="actions">
            <button type="button" autoFocus onClick={onClose}>
              Close
            </button>
          </div>
        </>
      )}
    </Dialog>
  );
}
