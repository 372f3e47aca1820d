/** Answers that follow the request: values valid against JSON schemas, and each protocol's tool and format asks read right. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startEmulator } from './index.ts';
import { followRequest, sampleFromSchema } from './scripted-answers.ts';

const valid = (schema: object, value: unknown) => z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]).safeParse(value).success;

describe('sampleFromSchema', () => {
  const SCHEMAS: [string, object][] = [
    ['bounded numbers, enums and formats', {
      type: 'object',
      properties: {
        n: { type: 'integer', minimum: 3, maximum: 9 },
        x: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
        step: { type: 'integer', minimum: 7, multipleOf: 5 },
        mode: { type: 'string', enum: ['fast', 'slow'] },
        when: { type: 'string', format: 'date-time' },
        mail: { type: 'string', format: 'email' },
        code: { type: 'string', minLength: 12, maxLength: 12 },
        fixed: { const: 'v1' },
      },
      required: ['n', 'x', 'step', 'mode', 'when', 'mail', 'code', 'fixed'],
      additionalProperties: false,
    }],
    ['arrays with bounds, nested objects, nullable types', {
      type: 'object',
      properties: {
        items: { type: 'array', minItems: 3, maxItems: 4, items: { type: 'object', properties: { id: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['id', 'tags'] } },
        note: { type: ['string', 'null'] },
        maybe: { anyOf: [{ type: 'null' }, { type: 'boolean' }] },
      },
      required: ['items', 'note', 'maybe'],
    }],
    ['$ref to $defs, allOf, oneOf', {
      $defs: { point: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'] } },
      type: 'object',
      properties: {
        at: { $ref: '#/$defs/point' },
        path: { type: 'array', items: { $ref: '#/$defs/point' } },
        both: { allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { type: 'object', properties: { b: { type: 'integer' } }, required: ['b'] }] },
        shape: { oneOf: [{ type: 'object', properties: { circle: { type: 'number' } }, required: ['circle'] }, { type: 'string' }] },
      },
      required: ['at', 'path', 'both', 'shape'],
    }],
  ];
  for (const [name, schema] of SCHEMAS) {
    it(`${name}: the value validates`, () => {
      const value = sampleFromSchema(schema);
      expect(valid(schema, value), JSON.stringify(value)).toBe(true);
    });
  }

  it('a recursive schema ends (bounded depth), still valid', () => {
    const tree = { $defs: { node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } }, required: ['name'] } }, $ref: '#/$defs/node' };
    expect(valid(tree, sampleFromSchema(tree))).toBe(true);
  });

  it("Gemini's capitalised types read as JSON schema types", () => {
    expect(sampleFromSchema({ type: 'OBJECT', properties: { n: { type: 'INTEGER', minimum: 2 }, s: { type: 'STRING' } } })).toEqual({ n: 2, s: 'example s' });
  });
});

describe('followRequest: each protocol read', () => {
  const tool = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

  it('openai and deepseek: required and named choices call; auto calls unless answering a tool result; none or no tools: the built-in answer', () => {
    const tools = [{ type: 'function', function: { name: 'a', parameters: tool } }, { type: 'function', function: { name: 'b', parameters: tool } }];
    const messages = [{ role: 'user', content: 'hi' }];
    expect(followRequest('openai', { messages, tools, tool_choice: 'required' })).toMatchObject({ kind: 'tool_calls', calls: [{ name: 'a', arguments: { city: 'example city' } }] });
    expect(followRequest('deepseek', { messages, tools, tool_choice: { type: 'function', function: { name: 'b' } } })).toMatchObject({ calls: [{ name: 'b' }] });
    expect(followRequest('openai', { messages, tools })).toMatchObject({ kind: 'tool_calls' });
    expect(followRequest('openai', { messages: [...messages, { role: 'tool', tool_call_id: 'x', content: '{}' }], tools })).toBeNull();
    expect(followRequest('openai', { messages, tools, tool_choice: 'none' })).toBeNull();
    expect(followRequest('openai', { messages })).toBeNull();
  });

  it("structured output: a native json_schema, the gateway's schema instruction with json_object, a bare json_object", () => {
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
    const native = followRequest('openai', { messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_schema', json_schema: { name: 'r', schema } } });
    expect(native).toEqual({ kind: 'text', text: '{"ok":true}' });
    const instructed = followRequest('deepseek', {
      messages: [{ role: 'system', content: `Answer with a single JSON object only, no prose and no code fences, that validates against this JSON schema named "r":\n${JSON.stringify(schema)}` }, { role: 'user', content: 'hi' }],
      response_format: { type: 'json_object' },
    });
    expect(instructed).toEqual({ kind: 'text', text: '{"ok":true}' });
    expect(followRequest('deepseek', { messages: [{ role: 'user', content: 'json please' }], response_format: { type: 'json_object' } })).toEqual({ kind: 'text', text: '{}' });
  });

  it("anthropic: tool_choice any/tool/none, a forced choice sent as an instruction, output_config's schema", () => {
    const tools = [{ name: 'a', input_schema: tool }, { name: 'b', input_schema: tool }];
    const messages = [{ role: 'user', content: 'hi' }];
    expect(followRequest('anthropic', { messages, tools, tool_choice: { type: 'tool', name: 'b' } })).toMatchObject({ calls: [{ name: 'b' }] });
    expect(followRequest('anthropic', { messages, tools, tool_choice: { type: 'none' } })).toBeNull();
    expect(followRequest('anthropic', { messages, tools, system: 'In this answer you must call the tool "b" (and no other tool).', tool_choice: { type: 'auto' } })).toMatchObject({ calls: [{ name: 'b' }] });
    const afterResult = [...messages, { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'a', input: {} }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'ok' }] }];
    expect(followRequest('anthropic', { messages: afterResult, tools })).toBeNull();
    expect(followRequest('anthropic', { messages, output_config: { format: { type: 'json_schema', schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } } } })).toEqual({ kind: 'text', text: '{"n":1}' });
  });

  it('gemini: functionCallingConfig ANY with one allowed name, NONE, and responseJsonSchema', () => {
    const tools = [{ functionDeclarations: [{ name: 'a', parametersJsonSchema: tool }, { name: 'b', parameters: { type: 'OBJECT', properties: { q: { type: 'STRING' } } } }] }];
    const contents = [{ role: 'user', parts: [{ text: 'hi' }] }];
    expect(followRequest('gemini', { contents, tools, toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['b'] } } })).toMatchObject({ calls: [{ name: 'b', arguments: { q: 'example q' } }] });
    expect(followRequest('gemini', { contents, tools, toolConfig: { functionCallingConfig: { mode: 'NONE' } } })).toBeNull();
    expect(followRequest('gemini', { contents, generationConfig: { responseMimeType: 'application/json', responseJsonSchema: { type: 'object', properties: { s: { type: 'string' } } } } })).toEqual({ kind: 'text', text: '{"s":"example s"}' });
  });
});

describe('an emulator with followRequests', () => {
  it('a queued scenario still wins; without the option the built-in echo answers', async () => {
    const following = await startEmulator('openai', { followRequests: true });
    const plain = await startEmulator('openai');
    try {
      const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'a', parameters: { type: 'object', properties: {} } } }], tool_choice: 'required' });
      const post = async (e: typeof plain) => (await fetch(`${e.baseUrl}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${e.apiKey}`, 'content-type': 'application/json' }, body })).json() as Promise<{ choices: { message: { content: string | null; tool_calls?: unknown[] } }[] }>;
      expect((await post(following)).choices[0]?.message.tool_calls).toHaveLength(1);
      following.enqueue({ kind: 'text', text: 'scripted' });
      expect((await post(following)).choices[0]?.message.content).toBe('scripted');
      expect((await post(plain)).choices[0]?.message.content).toMatch(/^Hello from openai emulator/);
    } finally {
      await following.close();
      await plain.close();
    }
  });
});
