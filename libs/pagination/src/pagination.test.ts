import { keysetRange, listEnvelope, mapPage, pageOf, toPage, type PageQuery } from './pagination';

// Ids sort by creation time; the list is newest first.
const ids = ['k09', 'k08', 'k07', 'k06', 'k05', 'k04', 'k03', 'k02', 'k01'];

/** What a database answers for a keyset range over `ids`. */
function read(query: PageQuery): string[] {
  const range = keysetRange(query);
  const ascending = [...ids].sort();
  let rows = range.order === 'asc' ? ascending : ascending.reverse();
  if (range.cursor && 'lt' in range.cursor) rows = rows.filter((id) => id < (range.cursor as { lt: string }).lt);
  if (range.cursor && 'gt' in range.cursor) rows = rows.filter((id) => id > (range.cursor as { gt: string }).gt);
  return rows.slice(0, range.take);
}

const page = (query: PageQuery) => toPage(read(query), query, (id) => id);

describe('keyset pages of a newest-first list', () => {
  it('the first page holds the newest items and says more exist', () => {
    expect(page({ limit: 3 })).toEqual({
      object: 'list',
      data: ['k09', 'k08', 'k07'],
      has_more: true,
      first_id: 'k09',
      last_id: 'k07',
    });
  });

  it('following last_id as after_id walks every item exactly once', () => {
    const seen: string[] = [];
    let query: PageQuery = { limit: 4 };
    for (;;) {
      const result = page(query);
      seen.push(...result.data);
      if (!result.has_more) break;
      query = { limit: 4, after_id: result.last_id! };
    }
    expect(seen).toEqual(ids);
  });

  it('before_id gives the page just before, still newest first', () => {
    expect(page({ limit: 2, before_id: 'k05' })).toEqual({
      object: 'list',
      data: ['k07', 'k06'],
      has_more: true,
      first_id: 'k07',
      last_id: 'k06',
    });
    expect(page({ limit: 5, before_id: 'k07' })).toMatchObject({ data: ['k09', 'k08'], has_more: false });
  });

  it('the last page says no more and an empty page has null ids', () => {
    expect(page({ limit: 3, after_id: 'k03' })).toEqual({
      object: 'list',
      data: ['k02', 'k01'],
      has_more: false,
      first_id: 'k02',
      last_id: 'k01',
    });
    expect(page({ limit: 3, after_id: 'k01' })).toEqual({
      object: 'list',
      data: [],
      has_more: false,
      first_id: null,
      last_id: null,
    });
  });
});

describe('pages of an in-memory list in display order', () => {
  const items = ['house', 'house-omni', 'house-fast', 'gpt-x', 'claude-y'];

  it('walks forward with after_id and back with before_id', () => {
    expect(pageOf(items, { limit: 2 }, (id) => id)).toMatchObject({
      data: ['house', 'house-omni'],
      has_more: true,
      last_id: 'house-omni',
    });
    expect(pageOf(items, { limit: 2, after_id: 'house-omni' }, (id) => id)).toMatchObject({
      data: ['house-fast', 'gpt-x'],
      has_more: true,
    });
    expect(pageOf(items, { limit: 2, before_id: 'gpt-x' }, (id) => id)).toMatchObject({
      data: ['house-omni', 'house-fast'],
      has_more: true,
    });
    expect(pageOf(items, { limit: 9, before_id: 'house-fast' }, (id) => id)).toMatchObject({
      data: ['house', 'house-omni'],
      has_more: false,
    });
  });

  it('a cursor that is not in the list gives an empty page', () => {
    expect(pageOf(items, { limit: 2, after_id: 'nope' }, (id) => id)).toEqual({
      object: 'list',
      data: [],
      has_more: false,
      first_id: null,
      last_id: null,
    });
    expect(pageOf(items, { limit: 2, before_id: 'nope' }, (id) => id)).toMatchObject({ data: [], has_more: false });
  });
});

describe('a page a service already read, in the list envelope', () => {
  it('takes its cursors from the first and last items, before any rendering', () => {
    const page = mapPage(
      listEnvelope([{ key: 'k3' }, { key: 'k2' }], true, (row) => row.key),
      (row) => ({ name: row.key.toUpperCase() }),
    );
    expect(page).toEqual({
      object: 'list',
      data: [{ name: 'K3' }, { name: 'K2' }],
      has_more: true,
      first_id: 'k3',
      last_id: 'k2',
    });
  });

  it('has null cursors when the page is empty', () => {
    expect(listEnvelope([], false, (row: { id: string }) => row.id)).toEqual({
      object: 'list',
      data: [],
      has_more: false,
      first_id: null,
      last_id: null,
    });
  });
});
