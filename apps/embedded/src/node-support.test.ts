import { endOfLifeWarning } from './node-support';

const TODAY = new Date('2026-11-25T12:00:00Z');

describe('the end-of-life warning of npm start', () => {
  it('warns in one line on Node 20, which ended on 2026-04-30', () => {
    const warning = endOfLifeWarning('20.19.2', TODAY);
    expect(warning).toContain('v20.19.2 reached end of life on 2026-04-30');
    expect(warning).not.toContain('\n');
  });

  it('warns on a line older than the table and on an odd line past its end', () => {
    expect(endOfLifeWarning('v18.20.0', TODAY)).toMatch(
      /^warning: Node\.js v18\.20\.0 reached end of life and gets no security fixes/,
    );
    expect(endOfLifeWarning('25.2.0', TODAY)).toContain('end of life on 2026-06-01');
  });

  it('stays quiet on supported lines, and on a line newer than the table', () => {
    expect(endOfLifeWarning('24.21.0', TODAY)).toBeUndefined();
    expect(endOfLifeWarning('22.22.0', TODAY)).toBeUndefined();
    expect(endOfLifeWarning('28.0.0', TODAY)).toBeUndefined();
  });

  it('starts warning on the day a line ends', () => {
    expect(endOfLifeWarning('20.19.0', new Date('2026-04-29T23:59:59Z'))).toBeUndefined();
    expect(endOfLifeWarning('20.19.0', new Date('2026-04-30T00:00:00Z'))).toBeDefined();
  });
});
