/**
 * Generators of hostile input for the fuzz suite (fast-check): strings with control,
 * non-Latin-1 and lone-surrogate characters, prototype keys, huge and deeply nested
 * values, numbers at and past every bound, and chat request bodies with every field of
 * the spec's chat request table given wrong types, out-of-range values and garbage.
 */
import fc from 'fast-check';

/** Strings known to break careless code. */
export const NASTY_STRINGS = [
  '', ' ', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf',
  'ключ', '鍵', '🔑', 'k\u0000', '\r\n', 'a\r\nx-injected: 1', '\u2028', '\u2029', '\ufeff', '\ud800', 'a\udfff',
  '%', '%00', '%E0%A4%A', '%25', '..', '../../etc/passwd', '<script>alert(1)</script>', "' OR 1=1 --", '${jndi:ldap://x}',
  'null', 'undefined', 'NaN', '-0', '1e999', 'data:image/png;base64,', 'https://', '#/$defs/x', '#/%E0',
];

/** Object keys: prototype names, header-hostile characters, long names. */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.integer({ min: 129, max: 20_000 }).map((n) => 'k'.repeat(n)) },
);

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 60_000 }).map((n) => 'y '.repeat(n / 2)) },
);

export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -0, 1, -1, 0.5, 2, 2.000001, -2.000001, 64, 100, 101, 128, 512, 513, 4096, 5000, 5001, 16, 17, 65536, 2 ** 31, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e308, -1e308, 5e-324),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** A value nested `depth` levels deep; serialised as text by `toJsonText` (JSON.stringify itself would overflow). */
export class Deep {
  constructor(
    readonly depth: number,
    readonly kind: 'object' | 'array',
  ) {}

  text(): string {
    return this.kind === 'object' ? '{"d":'.repeat(this.depth) + '0' + '}'.repeat(this.depth) : '['.repeat(this.depth) + ']'.repeat(this.depth);
  }
}

export const deepValue: fc.Arbitrary<Deep> = fc
  .tuple(fc.oneof(fc.integer({ min: 60, max: 70 }), fc.constantFrom(1_000, 10_000, 100_000)), fc.constantFrom('object' as const, 'array' as const))
  .map(([depth, kind]) => new Deep(depth, kind));

/** Own enumerable properties, also for `__proto__` (an object literal would set the prototype instead). */
export function objectOf(entries: [string, unknown][]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of entries) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
}

export const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { maxDepth: 3, depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    hostileNumber,
    hostileString,
    deepValue,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.array(fc.tuple(hostileKey, tie('value')), { maxLength: 4 }).map(objectOf),
  ),
})).value;

/** JSON text of a generated value, with every Deep written out as text. */
export function toJsonText(value: unknown): string {
  const deep: Deep[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Deep) {
      deep.push(v);
      return `__DEEP_${deep.length - 1}__`;
    }
    return v;
  });
  if (text === undefined) return 'null';
  return deep.length === 0 ? text : text.replace(/"__DEEP_(\d+)__"/g, (_m, i: string) => (deep[Number(i)] as Deep).text());
}

/** Mostly `valid`, sometimes anything at all. */
function mostly<T>(valid: fc.Arbitrary<T>, validWeight = 4): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: validWeight, arbitrary: valid }, { weight: 1, arbitrary: hostileValue });
}

/**
 * A field of the chat body present about one time in seven: with two dozen optional
 * fields, a fair share of requests passes validation and reaches the provider.
 */
function rarely<T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
}

/** Optional fields: `undefined` is left out of the JSON. */
function sometimes<T>(arb: fc.Arbitrary<T>, freq = 3): fc.Arbitrary<T | undefined> {
  return fc.option(arb, { nil: undefined, freq });
}

/** Fixture models that run (one or more per provider), and ones that cannot (unpriced, removed, duplicate, no chat provider, not a chat model). */
const RUNNABLE_MODELS = ['gpt-test', 'gpt-reasoner', 'deepseek-test', 'claude-test', 'claude-legacy', 'gemini-test', 'gpt-test-2026-01-01', 'deepseek-chat'];
const OTHER_MODELS = ['gpt-unpriced', 'gpt-gone', 'gpt-alias', 'llama-hosted', 'pic-1', 'no-such-model'];

const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const TINY_PDF = `data:application/pdf;base64,${Buffer.from('%PDF-1.4\n1 0 obj<</Type /Page>>endobj\n%%EOF').toString('base64')}`;

const imageUrl = fc.constantFrom(TINY_PNG, 'https://example.com/cat.png', 'http://example.com/cat.png', 'data:image/png;base64,not-base64!', 'data:text/plain;base64,aGk=', 'ftp://x', '');

const jsonSchema: fc.Arbitrary<unknown> = fc.letrec<{ schema: unknown }>((tie) => ({
  schema: fc.oneof(
    { maxDepth: 3, depthSize: 'small' },
    fc.constantFrom({ type: 'string' }, { type: 'integer', exclusiveMinimum: 0 }, { type: 'number', multipleOf: 0.5, default: 1 }, { $ref: '#' }, { $ref: '#/$defs/x' }, { $ref: '#/%E0%A4%A' }, { const: 'x' }),
    fc.record({ type: fc.constant('object'), properties: fc.array(fc.tuple(hostileKey, tie('schema')), { maxLength: 3 }).map(objectOf), required: sometimes(fc.array(hostileKey, { maxLength: 3 })), additionalProperties: sometimes(fc.boolean()) }, { requiredKeys: ['type'] }),
    fc.record({ type: fc.constant('array'), items: tie('schema') }),
    fc.record({ anyOf: fc.array(tie('schema'), { maxLength: 3 }) }),
    fc.record({ allOf: fc.array(tie('schema'), { maxLength: 3 }), $defs: sometimes(fc.record({ x: tie('schema') })) }, { requiredKeys: ['allOf'] }),
  ),
})).schema;

const toolName = fc.oneof({ weight: 4, arbitrary: fc.constantFrom('get_weather', 'f', 'a-b_c') }, { weight: 1, arbitrary: hostileString });

const tool = fc.record(
  {
    type: mostly(fc.constant('function'), 6),
    function: mostly(
      fc.record(
        {
          name: mostly(toolName, 4),
          description: sometimes(mostly(fc.string({ maxLength: 30 }))),
          parameters: sometimes(fc.oneof({ weight: 4, arbitrary: jsonSchema }, { weight: 1, arbitrary: deepValue }, { weight: 1, arbitrary: hostileValue })),
          strict: sometimes(mostly(fc.boolean())),
        },
        { requiredKeys: ['name'] },
      ),
      6,
    ),
  },
  { requiredKeys: ['type'] },
);

const toolCall = fc.record({
  id: mostly(fc.constantFrom('call_1', 'call_2'), 5),
  type: mostly(fc.constant('function'), 6),
  function: mostly(
    fc.record({
      name: toolName,
      arguments: fc.oneof(fc.constantFrom('{}', '{"city":"Oslo"}', '', 'not json', '[1,2]', 'null'), deepValue.map((d) => d.text()), hostileValue),
    }),
    6,
  ),
});

const part = fc.oneof(
  { weight: 4, arbitrary: fc.record({ type: fc.constant('text'), text: mostly(fc.string({ maxLength: 30 }), 5) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('text'), text: fc.constant('hi'), extra: fc.oneof(deepValue, hostileValue) }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('image_url'), image_url: fc.oneof(imageUrl, fc.record({ url: mostly(imageUrl), detail: sometimes(fc.constantFrom('low', 'high', 'auto', 'ultra')) }), hostileValue) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('file'), file: fc.oneof(fc.record({ file_data: fc.constantFrom(TINY_PDF, 'data:application/pdf;base64,JVBERi0=', 'data:application/pdf;base64,') }), fc.record({ file_id: fc.string() }), hostileValue) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constantFrom('input_audio', 'refusal', 'video', '__proto__'), data: hostileValue }) },
  { weight: 1, arbitrary: hostileValue },
);

const content = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.array(part, { maxLength: 3 }) },
  { weight: 1, arbitrary: hostileValue },
);

const message = fc.oneof(
  { weight: 5, arbitrary: fc.record({ role: fc.constant('user'), content }) },
  { weight: 1, arbitrary: fc.record({ role: fc.constantFrom('system', 'developer'), content }) },
  {
    weight: 2,
    arbitrary: fc.record(
      { role: fc.constant('assistant'), content: fc.oneof(fc.constant(null), content), tool_calls: sometimes(mostly(fc.array(toolCall, { maxLength: 2 }))), refusal: sometimes(hostileValue), reasoning_content: sometimes(hostileValue) },
      { requiredKeys: ['role', 'content'] },
    ),
  },
  { weight: 1, arbitrary: fc.record({ role: fc.constant('tool'), tool_call_id: mostly(fc.constantFrom('call_1', 'call_2', '')), content: fc.oneof(content, deepValue.map((d) => d.text())) }, { requiredKeys: ['role'] }) },
  { weight: 1, arbitrary: fc.record({ role: fc.oneof(fc.constantFrom('function', 'tool', 'model', 'USER', ''), hostileString), content: hostileValue, name: sometimes(hostileString) }, { requiredKeys: ['role'] }) },
  { weight: 1, arbitrary: hostileValue },
);

const bigMessages = fc.constantFrom(0, 5000, 5001).map((n) => Array.from({ length: n }, () => ({ role: 'user', content: 'x' })));
const manyTools = fc.constantFrom(512, 513).map((n) => Array.from({ length: n }, (_, i) => ({ type: 'function', function: { name: `t${i}` } })));

const responseFormat = fc.oneof(
  fc.constantFrom({ type: 'text' }, { type: 'json_object' }, { type: 'json_schema' }, { type: 'xml' }),
  fc.record({
    type: fc.constant('json_schema'),
    json_schema: mostly(fc.record({ name: mostly(fc.constantFrom('answer', 'a-b', 'x'.repeat(65))), schema: sometimes(fc.oneof(jsonSchema, deepValue, hostileValue)), strict: sometimes(mostly(fc.boolean())), description: sometimes(mostly(fc.string())) }, { requiredKeys: ['name'] })),
  }),
);

/** A chat request body: every field of the spec's request table, each present or not, valid or hostile. */
export const chatBodyValue: fc.Arbitrary<unknown> = fc
  .tuple(
    fc.record({
      model: fc.oneof({ weight: 16, arbitrary: fc.constantFrom(...RUNNABLE_MODELS) }, { weight: 2, arbitrary: fc.constantFrom(...OTHER_MODELS) }, { weight: 1, arbitrary: hostileValue }),
      messages: fc.oneof(
        { weight: 12, arbitrary: fc.array(fc.record({ role: fc.constantFrom('user', 'system', 'developer'), content: fc.string({ maxLength: 30 }) }), { minLength: 1, maxLength: 3 }).map((m) => [...m, { role: 'user', content: 'hi' }]) },
        { weight: 8, arbitrary: fc.array(message, { minLength: 1, maxLength: 4 }) },
        { weight: 1, arbitrary: bigMessages },
        { weight: 1, arbitrary: hostileValue },
      ),
      max_tokens: rarely(mostly(fc.integer({ min: 1, max: 64 }))),
      max_completion_tokens: rarely(mostly(fc.integer({ min: 1, max: 64 }))),
      temperature: rarely(mostly(fc.double({ min: 0, max: 2, noNaN: true }))),
      top_p: rarely(mostly(fc.double({ min: 0, max: 1, noNaN: true }))),
      stop: rarely(mostly(fc.oneof(fc.string({ maxLength: 5 }), fc.array(fc.string({ maxLength: 5 }), { maxLength: 20 })))),
      seed: rarely(mostly(fc.integer())),
      frequency_penalty: rarely(mostly(fc.double({ min: -2, max: 2, noNaN: true }))),
      presence_penalty: rarely(mostly(fc.double({ min: -2, max: 2, noNaN: true }))),
      logit_bias: rarely(mostly(fc.array(fc.tuple(fc.oneof(fc.nat().map(String), hostileKey), mostly(fc.integer({ min: -100, max: 100 }))), { maxLength: 3 }).map(objectOf))),
      stream: rarely(mostly(fc.boolean(), 8)),
      stream_options: rarely(mostly(fc.record({ include_usage: mostly(fc.boolean()) }))),
      tools: rarely(fc.oneof({ weight: 6, arbitrary: fc.array(tool, { maxLength: 3 }) }, { weight: 1, arbitrary: manyTools }, { weight: 1, arbitrary: hostileValue })),
      tool_choice: rarely(mostly(fc.oneof(fc.constantFrom('none', 'auto', 'required'), fc.record({ type: mostly(fc.constant('function')), function: mostly(fc.record({ name: toolName })) })))),
      parallel_tool_calls: rarely(mostly(fc.boolean())),
      response_format: rarely(mostly(responseFormat)),
      user: rarely(mostly(fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('u'.repeat(512), 'u'.repeat(513))))),
      reasoning_effort: rarely(mostly(fc.constantFrom('low', 'medium', 'high', 'minimal'))),
      verbosity: rarely(mostly(fc.constantFrom('low', 'medium', 'high'))),
    }),
    // The spec's rejected list (each refuses the request): one of them now and then.
    fc.oneof(
      { weight: 8, arbitrary: fc.constant([] as [string, unknown][]) },
      {
        weight: 1,
        arbitrary: fc.oneof(
          fc.tuple(fc.constant('n'), mostly(fc.constantFrom(1, 2))),
          fc.tuple(fc.constant('logprobs'), mostly(fc.boolean())),
          fc.tuple(fc.constant('modalities'), mostly(fc.constantFrom(['text'], ['text', 'audio']))),
          fc.tuple(fc.constantFrom('top_logprobs', 'audio', 'functions', 'function_call', 'web_search_options'), hostileValue),
        ).map((entry) => [entry as [string, unknown]]),
      },
    ),
    fc.oneof(fc.constant([] as [string, unknown][]), fc.array(fc.tuple(hostileKey, hostileValue), { minLength: 1, maxLength: 3 })),
  )
  .map(([fields, rejected, extra]) => objectOf([...Object.entries(fields).filter(([, value]) => value !== undefined), ...rejected, ...extra]));

/** A request body as sent: mostly JSON objects, sometimes other JSON, broken JSON or no JSON at all. */
export function bodyText(value: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 12, arbitrary: value.map(toJsonText) },
    { weight: 1, arbitrary: hostileValue.map(toJsonText) },
    { weight: 1, arbitrary: value.map((v) => toJsonText(v)).chain((text) => fc.nat({ max: Math.max(0, text.length - 1) }).map((cut) => text.slice(0, cut))) },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', 'null', '[]', '"x"', '1e999', '{"a":1,"a":2}', '\ufeff{}', '{"model":"gpt-test"', 'model=gpt-test', '\u0000') },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
  );
}
