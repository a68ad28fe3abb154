import { isEnumWord, isSafeName, mayEnumerate, stringFormat, type StringFormat } from './classify';

/** A JSON Schema (2020-12) object as we emit it. */
export type JsonSchema = { [keyword: string]: unknown };

const ENUM_MIN_SEEN = 3;
const ENUM_MAX_VALUES = 8;

interface StringShape {
  count: number;
  /** Per format ('' = none); a format is declared only when every value had it. */
  formats: Map<StringFormat | '', number>;
  /** Candidate enum values and their counts; null once a value rules an enum out. */
  values: Map<string, number> | null;
}

interface ObjectShape {
  count: number;
  properties: Map<string, Shape>;
  /** Set once a key is not a printable name (ids, emails): the object is a map and only its values are described. */
  mapValues: Shape | null;
}

/**
 * Everything seen at one position of a body across observations: how often, and per JSON type what the
 * values looked like. Mixed types stay side by side and render as a union.
 */
export interface Shape {
  count: number;
  nulls: number;
  booleans: number;
  integers: number;
  numbers: number;
  strings: StringShape | null;
  objects: ObjectShape | null;
  arrays: { count: number; items: Shape } | null;
}

export function emptyShape(): Shape {
  return { count: 0, nulls: 0, booleans: 0, integers: 0, numbers: 0, strings: null, objects: null, arrays: null };
}

function observeString(shape: Shape, value: string): void {
  const strings = (shape.strings ??= { count: 0, formats: new Map(), values: new Map() });
  strings.count += 1;
  const format = stringFormat(value) ?? '';
  strings.formats.set(format, (strings.formats.get(format) ?? 0) + 1);
  if (strings.values && isEnumWord(value)) {
    strings.values.set(value, (strings.values.get(value) ?? 0) + 1);
    if (strings.values.size > ENUM_MAX_VALUES) strings.values = null;
  } else {
    strings.values = null;
  }
}

function observeObject(shape: Shape, value: Record<string, unknown>): void {
  const objects = (shape.objects ??= { count: 0, properties: new Map(), mapValues: null });
  objects.count += 1;
  const entries = Object.entries(value);
  if (!objects.mapValues && entries.some(([key]) => !isSafeName(key))) {
    // From now on this is a map: fold what was recorded per property into the value shape.
    objects.mapValues = emptyShape();
    for (const property of objects.properties.values()) mergeShape(objects.mapValues, property);
    objects.properties.clear();
  }
  for (const [key, item] of entries) {
    if (objects.mapValues) {
      observe(objects.mapValues, item);
      continue;
    }
    let property = objects.properties.get(key);
    if (!property) objects.properties.set(key, (property = emptyShape()));
    observe(property, item);
  }
}

/** Records one JSON value at this position. */
export function observe(shape: Shape, value: unknown): void {
  shape.count += 1;
  if (value === null || value === undefined) shape.nulls += 1;
  else if (typeof value === 'boolean') shape.booleans += 1;
  else if (typeof value === 'number') {
    if (Number.isInteger(value)) shape.integers += 1;
    else shape.numbers += 1;
  } else if (typeof value === 'string') observeString(shape, value);
  else if (Array.isArray(value)) {
    const arrays = (shape.arrays ??= { count: 0, items: emptyShape() });
    arrays.count += 1;
    for (const item of value) observe(arrays.items, item);
  } else if (typeof value === 'object') observeObject(shape, value as Record<string, unknown>);
}

function mergeStrings(into: StringShape, from: StringShape): void {
  into.count += from.count;
  for (const [format, n] of from.formats) into.formats.set(format, (into.formats.get(format) ?? 0) + n);
  if (!into.values || !from.values) into.values = null;
  else {
    for (const [value, n] of from.values) into.values.set(value, (into.values.get(value) ?? 0) + n);
    if (into.values.size > ENUM_MAX_VALUES) into.values = null;
  }
}

/** Folds `from` into `into`: the shape of both sets of observations together. */
export function mergeShape(into: Shape, from: Shape): void {
  into.count += from.count;
  into.nulls += from.nulls;
  into.booleans += from.booleans;
  into.integers += from.integers;
  into.numbers += from.numbers;
  if (from.strings) {
    if (into.strings) mergeStrings(into.strings, from.strings);
    else
      into.strings = {
        count: from.strings.count,
        formats: new Map(from.strings.formats),
        values: from.strings.values && new Map(from.strings.values),
      };
  }
  if (from.arrays) {
    const arrays = (into.arrays ??= { count: 0, items: emptyShape() });
    arrays.count += from.arrays.count;
    mergeShape(arrays.items, from.arrays.items);
  }
  if (from.objects) {
    const objects = (into.objects ??= { count: 0, properties: new Map(), mapValues: null });
    objects.count += from.objects.count;
    if (from.objects.mapValues && !objects.mapValues) {
      objects.mapValues = emptyShape();
      for (const property of objects.properties.values()) mergeShape(objects.mapValues, property);
      objects.properties.clear();
    }
    for (const [key, property] of from.objects.properties) {
      if (objects.mapValues) mergeShape(objects.mapValues, property);
      else {
        let target = objects.properties.get(key);
        if (!target) objects.properties.set(key, (target = emptyShape()));
        mergeShape(target, property);
      }
    }
    if (from.objects.mapValues && objects.mapValues) mergeShape(objects.mapValues, from.objects.mapValues);
  }
}

function stringSchema(strings: StringShape, path: readonly string[]): JsonSchema {
  const schema: JsonSchema = { type: 'string' };
  const formats = [...strings.formats.keys()];
  if (formats.length === 1 && formats[0]) schema.format = formats[0];
  // An enum only where it is evident: a category-named field, seen often, with few word-like values that repeat.
  const values = strings.values;
  if (values && mayEnumerate(path) && strings.count >= ENUM_MIN_SEEN && values.size < strings.count) {
    schema.enum = [...values.keys()].sort();
  }
  return schema;
}

function objectSchema(objects: ObjectShape, path: readonly string[]): JsonSchema {
  if (objects.mapValues)
    return { type: 'object', additionalProperties: renderShape(objects.mapValues, [...path, '*']) };
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [key, property] of objects.properties) {
    properties[key] = renderShape(property, [...path, key]);
    // Required = present in every observed object; a null value still counts as present.
    if (property.count === objects.count) required.push(key);
  }
  const schema: JsonSchema = { type: 'object', properties };
  if (required.length > 0) schema.required = required;
  return schema;
}

/**
 * The JSON Schema for a shape. One JSON type renders as itself; several scalar types become a type array
 * (`["string", "null"]`); when objects or arrays are mixed with other types the alternatives go in `anyOf`.
 * Integers seen beside fractional numbers widen to `number`. `path` holds the property names down to here
 * (for the enum rule); no value is printed except an enum that passed that rule.
 */
export function renderShape(shape: Shape, path: readonly string[] = []): JsonSchema {
  const scalars: string[] = [];
  if (shape.booleans) scalars.push('boolean');
  if (shape.numbers) scalars.push('number');
  else if (shape.integers) scalars.push('integer');
  const string = shape.strings ? stringSchema(shape.strings, path) : undefined;
  if (string) scalars.push('string');
  const structured: JsonSchema[] = [];
  if (shape.objects) structured.push(objectSchema(shape.objects, path));
  if (shape.arrays) structured.push({ type: 'array', items: renderShape(shape.arrays.items, path) });
  if (shape.nulls) scalars.push('null');

  if (structured.length === 0) {
    if (scalars.length === 0) return {};
    const schema: JsonSchema = { ...string, type: scalars.length === 1 ? scalars[0] : scalars };
    // An enum restricts every type in the array, so a nullable category lists null among its values.
    if (Array.isArray(schema.enum) && shape.nulls) schema.enum = [...schema.enum, null];
    if (Array.isArray(schema.enum) && scalars.some((type) => type !== 'string' && type !== 'null')) delete schema.enum;
    return schema;
  }
  if (scalars.length === 0 && structured.length === 1) return structured[0]!;
  const alternatives = [...structured];
  const rest = scalars.filter((type) => type !== 'string');
  if (string) alternatives.push(string);
  if (rest.length > 0) alternatives.push({ type: rest.length === 1 ? rest[0] : rest });
  return { anyOf: alternatives };
}
