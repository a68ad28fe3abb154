import { copyBytes, EventTemplate, stringEnd } from './event-template';
import { cutTemplate, fillTemplate, readTemplate, type Template } from './frame-template';
import { encodeSse } from './sse';

/** A seeded generator, so a failure names a case that can be run again. */
function random(seed: number) {
  let state = seed;
  return (below: number) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return Math.floor((state / 2147483648) * below);
  };
}

type Chunk = {
  id: string;
  model: string;
  choices: Array<{ index: number; delta: { content: string } }>;
  obfuscation: string;
};
const chunk = (content: string, obfuscation = 'pad', model = 'up-model'): Chunk => ({
  id: 'c1',
  model,
  choices: [{ index: 0, delta: { content } }],
  obfuscation,
});
const cut = (value: Chunk): Template =>
  cutTemplate(value, [(text) => (value.choices[0]!.delta.content = text), (text) => (value.obfuscation = text)])!;
/** The upstream's template, and the caller's: the same chunk naming the caller's model. */
const upstream = () => cut(chunk('x'));
const caller = () => cut(chunk('x', 'pad', 'caller-model'));
const wire = (value: unknown) => Buffer.from(`data: ${JSON.stringify(value)}\n\n`);

const FOUND = new Int32Array(64);

/** What the string path makes of one event: the caller's frame, and the slot bodies (still escaped). */
function stringPath(event: Buffer): { frame: string; bodies: string[] } | undefined {
  const text = event.toString('utf8');
  if (!text.startsWith('data: ') || !text.endsWith('\n\n')) return undefined;
  const data = text.slice(6, -2);
  const bodies = readTemplate(data, upstream());
  return bodies && { frame: encodeSse({ data: fillTemplate(caller(), bodies) }), bodies };
}

// Strings whose JSON encodings exercise every way a slot can be written: short escapes, \u escapes (control
// characters, lone surrogates), characters of every UTF-8 length, separators JSON.stringify leaves raw.
const ATOMS = [
  'a',
  ' ',
  'word',
  '"',
  '\\',
  '\n',
  '\t',
  '\r',
  '\b',
  '\f',
  '\u0001',
  '\u001f',
  '\u007f',
  'é',
  '中',
  '😀',
  '\u2028',
  '\ud800',
  '\udc00',
  '/',
];

describe('EventTemplate', () => {
  it('reads and rewrites exactly the events the string path reads, to the same bytes', () => {
    const next = random(11);
    const template = EventTemplate.of('data: ', upstream(), caller())!;
    for (let round = 0; round < 3_000; round++) {
      const text = Array.from({ length: next(6) }, () => ATOMS[next(ATOMS.length)]).join('');
      const padding = Array.from({ length: next(3) }, () => ATOMS[next(ATOMS.length)]).join('');
      const event = wire(chunk(text, padding));
      const expected = stringPath(event);
      const end = template.read(event, 0, FOUND, 0);
      expect([text, padding, end >= 0]).toEqual([text, padding, expected !== undefined]);
      if (!expected) continue;
      expect(end).toBe(event.length);
      const frame = Buffer.alloc(template.callerLength(FOUND, 0));
      expect(template.writeCaller(event, FOUND, 0, frame, 0)).toBe(frame.length);
      expect(frame.toString('utf8')).toBe(expected.frame);
      const slot = 2 * template.textSlot;
      expect(event.toString('utf8', FOUND[slot], FOUND[slot + 1])).toBe(expected.bodies[0]);
    }
  });

  it('leaves to the string path a slot that is not well-formed UTF-8, which that path would replace', () => {
    const template = EventTemplate.of('data: ', upstream(), caller())!;
    const good = wire(chunk('ab'));
    const at = good.indexOf('ab');
    for (const bad of [
      [0x80],
      [0xc0, 0x80],
      [0xc1, 0xbf],
      [0xe0, 0x80, 0x80],
      [0xed, 0xa0, 0x80],
      [0xf0, 0x80, 0x80, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0xf5, 0x80, 0x80, 0x80],
      [0xff],
      [0xe2, 0x82],
    ]) {
      const event = Buffer.concat([good.subarray(0, at), Buffer.from(bad), good.subarray(at + 2)]);
      expect([bad, template.read(event, 0, FOUND, 0)]).toEqual([bad, -1]);
    }
  });

  it.each([
    ['a \\u escape JSON.stringify would not write', (data: string) => data.replace('"ab"', '"\\u0061b"')],
    ['an escaped slash', (data: string) => data.replace('"ab"', '"\\/"')],
    ['a backslash at the end of the slot', (data: string) => data.replace('"ab"', '"ab\\"')],
    ['a space the template does not have', (data: string) => data.replace('"id":', '"id": ')],
    ['another field changed', (data: string) => data.replace('"c1"', '"c2"')],
    ['a key changed between the slots', (data: string) => data.replace('"obfuscation"', '"obfuscatioN"')],
    ['a bracket changed after the last slot', (data: string) => `${data.slice(0, -1)}]`],
    ['trailing text', (data: string) => `${data} `],
  ])('does not read an event with %s', (_case, change) => {
    const template = EventTemplate.of('data: ', upstream(), caller())!;
    const event = Buffer.from(`data: ${change(JSON.stringify(chunk('ab')))}\n\n`);
    expect(template.read(event, 0, FOUND, 0)).toBe(-1);
  });

  it('reads only whole events written as the template writes them', () => {
    const template = EventTemplate.of('data: ', upstream(), caller())!;
    const event = wire(chunk('ab'));
    for (let cutAt = 0; cutAt < event.length; cutAt++)
      expect(template.read(event.subarray(0, cutAt), 0, FOUND, 0)).toBe(-1);
    const json = JSON.stringify(chunk('ab'));
    for (const other of [`data:${json}\n\n`, `data: ${json}\r\n\r\n`, `event: x\ndata: ${json}\n\n`, `data: ${json}\n`])
      expect(template.read(Buffer.from(other), 0, FOUND, 0)).toBe(-1);
  });

  it('reads events one after another in one chunk, each slot where it is', () => {
    const template = EventTemplate.of('data: ', upstream(), caller())!;
    const texts = ['one', ' two', ' 😀three'];
    const bytes = Buffer.concat([...texts.map((text) => wire(chunk(text))), Buffer.from('data: [DONE]\n\n')]);
    let at = 0;
    const read: string[] = [];
    for (let event = 0; event < texts.length; event++) {
      at = template.read(bytes, at, FOUND, 0);
      read.push(bytes.toString('utf8', FOUND[2 * template.textSlot], FOUND[2 * template.textSlot + 1]));
    }
    expect(read).toEqual(texts);
    expect(template.read(bytes, at, FOUND, 0)).toBe(-1);
    expect(bytes.toString('utf8', at)).toBe('data: [DONE]\n\n');
  });

  it('knows an event that goes out as it came, with an event line in its prefix', () => {
    const value = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x' } };
    const template = EventTemplate.of(
      'event: content_block_delta\ndata: ',
      cutTemplate(value, [(text) => (value.delta.text = text)])!,
    )!;
    expect(template.unchanged).toBe(true);
    const quoted = { ...value, delta: { type: 'text_delta', text: 'hi "you"' } };
    const event = Buffer.from(`event: content_block_delta\ndata: ${JSON.stringify(quoted)}\n\n`);
    expect(template.read(event, 0, FOUND, 0)).toBe(event.length);
    expect(event.toString('utf8', FOUND[0], FOUND[1])).toBe('hi \\"you\\"');
    expect(EventTemplate.of('data: ', upstream(), caller())!.unchanged).toBe(false);
  });

  it('is not made from templates whose slots differ', () => {
    const value = chunk('x');
    const textOnly = cutTemplate(value, [(text) => (value.choices[0]!.delta.content = text)])!;
    expect(EventTemplate.of('data: ', upstream(), textOnly)).toBeUndefined();
  });
});

describe('stringEnd', () => {
  it(
    'finds the closing quote after escapes and characters of every UTF-8 length, and stops at what JSON.stringify ' +
      'would not write',
    () => {
      const at = (text: string) => stringEnd(Buffer.from(text), 0);
      expect(at('abc"')).toBe(3);
      expect(at('a\\"b"')).toBe(4);
      expect(at('é中😀"')).toBe(9);
      expect(at('\\n\\t\\\\"')).toBe(6);
      expect(at('abc')).toBe(-1);
      expect(at('a\u0001"')).toBe(-1);
      expect(at('\\u0041"')).toBe(-1);
      expect(at('\\')).toBe(-1);
    },
  );
});

describe('copyBytes', () => {
  it('copies a range of any length to where it is asked, and says where the copy ends', () => {
    const source = Uint8Array.from({ length: 300 }, (_, i) => i % 251);
    for (const [start, end] of [
      [0, 0],
      [5, 6],
      [10, 74],
      [10, 75],
      [3, 300],
    ] as const) {
      const target = new Uint8Array(320).fill(255);
      expect(copyBytes(source, start, end, target, 7)).toBe(7 + end - start);
      expect([...target.subarray(7, 7 + end - start)]).toEqual([...source.subarray(start, end)]);
      expect(target[6]).toBe(255);
      expect(target[7 + end - start]).toBe(255);
    }
  });
});
