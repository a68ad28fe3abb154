import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { whenAborted } from './abort-watch';

// A full collection on demand, to see what the watch keeps alive (Jest runs without --expose-gc).
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

describe('whenAborted (one listener per signal)', () => {
  it('runs every watcher once when the signal aborts, and not those that stopped watching', () => {
    const controller = new AbortController();
    const ran: string[] = [];
    whenAborted(controller.signal, () => ran.push('a'));
    const stop = whenAborted(controller.signal, () => ran.push('b'));
    whenAborted(controller.signal, () => ran.push('c'));
    stop();
    controller.abort();
    controller.abort();
    expect(ran).toEqual(['a', 'c']);
  });

  it('runs at once on a signal that already aborted, and does nothing without a signal', () => {
    const ran: string[] = [];
    whenAborted(AbortSignal.abort(), () => ran.push('now'));
    whenAborted(undefined, () => ran.push('never'))();
    expect(ran).toEqual(['now']);
  });

  it(
    'keeps the signal to one listener however many calls ' + 'watch it (starting a call costs the same at 10,000 open)',
    () => {
      const controller = new AbortController();
      let added = 0;
      const add = controller.signal.addEventListener.bind(controller.signal);
      controller.signal.addEventListener = ((...args: Parameters<typeof add>) => {
        added += 1;
        return add(...args);
      }) as typeof add;
      const stops = Array.from({ length: 10_000 }, () => whenAborted(controller.signal, () => undefined));
      for (const stop of stops) stop();
      expect(added).toBe(1);
    },
  );

  it('keeps no watcher alive once it stopped watching, the first one included', async () => {
    const controller = new AbortController();
    const watched = (() => {
      const call = { reply: 'x'.repeat(1000) };
      const stop = whenAborted(controller.signal, () => call.reply.length);
      stop();
      return new WeakRef(call);
    })();
    const later = whenAborted(controller.signal, () => undefined);
    // A WeakRef's target stays alive to the end of the current job: collect on a later turn.
    await new Promise((resolve) => setImmediate(resolve));
    collect();
    expect(watched.deref()).toBeUndefined();
    later();
  });
});
