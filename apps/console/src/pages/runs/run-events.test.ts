import type { RunEvent } from '../../api/types';
import { transcriptOf, withEvent } from './run-events';

const event = (seq: number, type: string, data: Record<string, unknown> = {}): RunEvent => ({
  object: 'run.event',
  run_id: 'run_1',
  seq,
  type,
  data,
  created_at: '2026-11-27T10:00:00Z',
});

describe('withEvent', () => {
  it('adds events in sequence and drops one already held, as a resumed stream may repeat', () => {
    let events: readonly RunEvent[] = [];
    for (const seq of [1, 2, 2, 3, 1, 4]) events = withEvent(events, event(seq, 'message.delta'));
    expect(events.map((one) => one.seq)).toEqual([1, 2, 3, 4]);
  });

  it('keeps a later event after a gap rather than hold the stream back', () => {
    const events = withEvent(withEvent([], event(1, 'run.queued')), event(3, 'run.started'));
    expect(events.map((one) => one.seq)).toEqual([1, 3]);
  });
});

describe('transcriptOf', () => {
  it('joins consecutive deltas, shows tool calls and results, and leaves out unknown types', () => {
    const entries = transcriptOf([
      event(1, 'run.queued'),
      event(2, 'run.started'),
      event(3, 'message.delta', { text: 'Let me ' }),
      event(4, 'message.delta', { text: 'look.' }),
      event(5, 'tool.call', { name: 'list_files', arguments: { path: '/' } }),
      event(6, 'tool.result', { name: 'list_files', ok: true, output: 'a.txt' }),
      event(7, 'something.new', { text: 'ignored' }),
      event(8, 'message.delta', { text: 'Done.' }),
      event(9, 'run.failed', { error: { code: 'worker_lost', message: 'The worker stopped.' } }),
    ]);
    expect(entries).toEqual([
      { kind: 'status', seq: 1, type: 'run.queued' },
      { kind: 'status', seq: 2, type: 'run.started' },
      { kind: 'message', seq: 3, text: 'Let me look.' },
      { kind: 'tool.call', seq: 5, name: 'list_files', input: '{"path":"/"}' },
      { kind: 'tool.result', seq: 6, name: 'list_files', ok: true, output: 'a.txt' },
      { kind: 'message', seq: 8, text: 'Done.' },
      { kind: 'status', seq: 9, type: 'run.failed', detail: 'The worker stopped.' },
    ]);
  });
});
