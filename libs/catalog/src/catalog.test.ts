import {
  BUILT_IN_ALIASES,
  CATALOG,
  findBuiltInAlias,
  findCatalogModel,
  HOUSE_MODELS,
  isHouseModel,
  modelKindOf,
} from './catalog';

describe('the catalog', () => {
  it('lists each model id once', () => {
    const ids = CATALOG.map((model) => model.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('covers the house models and at least one current model of each vendor the edge can dial', () => {
    const vendors = new Set(CATALOG.map((model) => model.vendor));
    expect([...vendors].sort()).toEqual(['anthropic', 'google', 'house', 'openai']);
    expect(CATALOG.filter((model) => model.lane === 'vendor').length).toBeGreaterThanOrEqual(10);
  });

  it('house models are listed at the spec rates, in credits per 1M tokens', () => {
    expect(findCatalogModel('house')?.price).toMatchObject({
      currency: 'credits',
      input: 200,
      output: 800,
      cache_read: 5,
    });
    expect(findCatalogModel('house-fast')?.price).toMatchObject({
      currency: 'credits',
      input: 100,
      output: 400,
      cache_read: 2.5,
    });
    expect(findCatalogModel('house-omni')?.price).toEqual(findCatalogModel('house')?.price);
  });

  it('house-fast has the 500k context the spec gives it', () => {
    expect(findCatalogModel('house-fast')?.context_window).toBe(500_000);
  });

  it('house models are vendor and lane "house"; every other model is a vendor model priced in USD', () => {
    for (const model of CATALOG) {
      const house = isHouseModel(model.id);
      expect({
        id: model.id,
        vendor: model.vendor === 'house',
        lane: model.lane,
        currency: model.price.currency,
      }).toEqual({
        id: model.id,
        vendor: house,
        lane: house ? 'house' : 'vendor',
        currency: house ? 'credits' : 'usd',
      });
    }
  });

  it(
    'every row is internally consistent: positive rates, ' + 'cache reads cheaper than input, output within context',
    () => {
      for (const model of CATALOG) {
        const { price } = model;
        const problems: string[] = [];
        // Embedding models produce no tokens: no output rate, no output limit.
        const outputRates = model.embedding ? [] : [price.output];
        for (const rate of [price.input, ...outputRates, price.cache_read, price.cache_write])
          if (!(rate > 0)) problems.push(`rate ${rate}`);
        if (model.embedding && (price.output !== 0 || model.max_output_tokens !== 0))
          problems.push('an embedding model with output');
        if (price.cache_read > price.input) problems.push('cache read dearer than input');
        if (model.max_output_tokens > model.context_window) problems.push('max output beyond the context window');
        if (price.long_context) {
          if (price.long_context.above_input_tokens >= model.context_window)
            problems.push('long-context line beyond the window');
          if (price.long_context.input < price.input || price.long_context.output < price.output)
            problems.push('long context cheaper');
        }
        if (!/^\d{4}-\d{2}-\d{2}$/.test(model.priced_on) || model.price_source.length === 0)
          problems.push('no provenance');
        expect({ id: model.id, problems }).toEqual({ id: model.id, problems: [] });
      }
    },
  );

  it('created is a unix time in seconds, not milliseconds', () => {
    for (const model of CATALOG) {
      expect(model.created).toBeGreaterThan(Date.UTC(2020, 0, 1) / 1000);
      expect(model.created).toBeLessThan(Date.UTC(2100, 0, 1) / 1000);
      expect(Number.isInteger(model.created)).toBe(true);
    }
    expect(findCatalogModel('claude-fable-5-1')?.created).toBe(Date.UTC(2026, 8, 1) / 1000);
  });

  it('looks models up by exact, case-sensitive id', () => {
    expect(findCatalogModel('gpt-6-astra')?.vendor).toBe('openai');
    expect(findCatalogModel('GPT-6-ASTRA')).toBeUndefined();
    expect(findCatalogModel('no-such-model')).toBeUndefined();
    expect(findCatalogModel('')).toBeUndefined();
  });
});

describe('embedding models', () => {
  it("are OpenAI's three at their list prices and dimensions, and the house one", () => {
    const embedding = CATALOG.filter((model) => modelKindOf(model) === 'embedding').map((model) => ({
      id: model.id,
      input: model.price.input,
      dimensions: model.embedding?.dimensions,
    }));
    expect(embedding).toEqual([
      { id: 'house-embed', input: 20, dimensions: 1536 },
      { id: 'text-embedding-3-small', input: 0.02, dimensions: 1536 },
      { id: 'text-embedding-3-large', input: 0.13, dimensions: 3072 },
      { id: 'text-embedding-ada-002', input: 0.1, dimensions: 1536 },
    ]);
    expect(findCatalogModel('text-embedding-ada-002')?.embedding?.adjustable_dimensions).toBe(false);
    expect(modelKindOf(findCatalogModel('house')!)).toBe('chat');
  });
});

describe('house models', () => {
  it('are exactly house, house-omni, house-fast and house-embed, each in the catalog', () => {
    expect([...HOUSE_MODELS]).toEqual(['house', 'house-omni', 'house-fast', 'house-embed']);
    for (const id of HOUSE_MODELS) expect(findCatalogModel(id)?.lane).toBe('house');
  });

  it('are recognised by exact id only', () => {
    expect(isHouseModel('house-fast')).toBe(true);
    expect(isHouseModel('House')).toBe(false);
    expect(isHouseModel('house-fast ')).toBe(false);
    expect(isHouseModel('claude-opus-5-5')).toBe(false);
  });
});

describe('built-in aliases', () => {
  it('include @house, @fast, @claude, @gpt and @gemini', () => {
    expect(Object.keys(BUILT_IN_ALIASES)).toEqual(
      expect.arrayContaining(['@house', '@fast', '@claude', '@gpt', '@gemini']),
    );
  });

  it("each names a catalog model, with that model's vendor, tier and display name", () => {
    for (const [token, alias] of Object.entries(BUILT_IN_ALIASES)) {
      const model = findCatalogModel(alias.model_id);
      expect({ token, found: model !== undefined }).toEqual({ token, found: true });
      expect({ token, vendor: alias.vendor, tier: alias.tier, label: alias.label }).toEqual({
        token,
        vendor: model?.vendor,
        tier: model?.tier,
        label: model?.display_name,
      });
    }
  });

  it('every token is an @ followed by a lowercase word', () => {
    for (const token of Object.keys(BUILT_IN_ALIASES)) expect(token).toMatch(/^@[a-z][a-z0-9-]*$/);
  });

  it('are found with or without the leading @', () => {
    expect(findBuiltInAlias('@fast')?.model_id).toBe('house-fast');
    expect(findBuiltInAlias('fast')?.model_id).toBe('house-fast');
    expect(findBuiltInAlias('@nope')).toBeUndefined();
    expect(findBuiltInAlias('toString')).toBeUndefined();
    expect(findBuiltInAlias('__proto__')).toBeUndefined();
  });
});
