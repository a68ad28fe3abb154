import type { XBuild } from '../../api/types';
import { boardOf, etaSeconds, seconds } from './board';

const job = (id: string, status: XBuild['status'], extra: Partial<XBuild> = {}): XBuild =>
  ({ id, status, lane: 'api', ...extra }) as XBuild;

describe('boardOf', () => {
  it('puts each job in its column, the queued ones in dispatch order', () => {
    const board = boardOf([
      job('a', 'queued', { position: 2 }),
      job('b', 'building'),
      job('c', 'queued', { position: 1 }),
      job('d', 'done'),
      job('e', 'refused'),
      job('f', 'fixing'),
    ]);
    expect(board.map((column) => [column.title, column.jobs.map((one) => one.id)])).toEqual([
      ['Queued', ['c', 'a']],
      ['In progress', ['b', 'f']],
      ['Done', ['d']],
      ['Stopped', ['e']],
    ]);
  });
});

describe('etaSeconds', () => {
  const now = Date.parse('2026-11-27T10:00:00Z');
  it('waits for the builds ahead, concurrency at a time, each a median long', () => {
    const lane = { concurrency: 2, medianBuildS: 30 };
    expect(etaSeconds(job('a', 'queued', { position: 1 }), lane, now)).toBe(30);
    expect(etaSeconds(job('a', 'queued', { position: 3 }), lane, now)).toBe(60);
  });
  it('assumes a minute a build until the lane has a median', () => {
    expect(etaSeconds(job('a', 'queued', { position: 1 }), { concurrency: 1, medianBuildS: null }, now)).toBe(60);
  });
  it('gives what is left of a median to a job in progress, and nothing to a settled one', () => {
    const started = {
      stages: [{ name: 'screening', started_at: '2026-11-27T09:59:50Z', ended_at: null, seconds: null }],
    };
    const lane = { concurrency: 1, medianBuildS: 25 };
    expect(etaSeconds(job('a', 'building', started), lane, now)).toBe(15);
    expect(etaSeconds(job('a', 'building', started), { concurrency: 1, medianBuildS: 5 }, now)).toBe(0);
    expect(etaSeconds(job('a', 'done', started), lane, now)).toBeUndefined();
  });
});

describe('seconds', () => {
  it('reads as seconds, minutes or hours', () => {
    expect([seconds(undefined), seconds(2.345), seconds(42), seconds(185), seconds(3720)]).toEqual([
      '—',
      '2.3 s',
      '42 s',
      '3 min 5 s',
      '1 h 2 min',
    ]);
  });
});
