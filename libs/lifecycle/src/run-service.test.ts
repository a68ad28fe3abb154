import { isBundleEntry } from './run-service';

describe('bundle entry detection', () => {
  it('no app counts as the bundle entry when running from sources (tests import every main.ts)', () => {
    for (const app of ['gateway', 'account', 'embedded']) expect(isBundleEntry(app)).toBe(false);
  });
});
