/**
 * One behaviour table, run for all four chat providers over real HTTP (gateway →
 * emulator of the provider's own wire format). Where a behaviour legitimately differs,
 * the provider's row in helpers/providers.ts says so; nothing differs silently.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chatGatewayEnv, costMicro, money, startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { startGateway, type TestGateway } from './helpers/gateway.ts';
import { assemble, lastBody, PROVIDERS, TIME_TOOL, TOOL_CHOICES, WEATHER_TOOL, textScenario, type ProviderRow } from './helpers/providers.ts';

let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness();
});
afterAll(async () => h.close());
beforeEach(() => {
  for (const e of [h.openai, h.deepseek, h.anthropic, h.gemini]) e.reset();
});

const hi = [{ role: 'user', content: 'Hello there' }];
const tools = [WEATHER_TOOL, TIME_TOOL];
const SCHEMA = { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'number' } }, required: ['city', 'celsius'], additionalProperties: false };
const ANSWER = '{"city":"Oslo","celsius":3}';
const jsonSchemaFormat = { type: 'json_schema', json_schema: { name: 'weather', schema: SCHEMA, strict: true } };

async function chat(key: string, body: Record<string, unknown>) {
  return h.gw.api('/chat/completions', { key, body });
}

/** A run that answered and billed exactly `prompt`/`completion` tokens. */
async function expectBilled(accountId: string, before: { balance: number }, prompt: number, completion: number) {
  expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - costMicro(prompt, completion), held: 0 });
}

async function expectRefunded(accountId: string, before: { balance: number }) {
  expect(await money(h.gw, accountId)).toEqual({ balance: before.balance, held: 0 });
}

describe.each(PROVIDERS)('$provider ($model)', (p: ProviderRow) => {
  const emu = () => p.emulator(h);

  it('a plain answer: content, finish stop, the provider usage billed to the micro-credit', async () => {
    const { key, accountId } = await h.gw.account();
    emu().enqueue(textScenario('Hi! How can I help?', undefined, { input: 12, output: 7 }));
    const before = await money(h.gw, accountId);
    const r = await chat(key, { model: p.model, messages: hi });
    expect(r.status).toBe(200);
    expect(r.json.choices).toEqual([{ index: 0, message: { role: 'assistant', content: 'Hi! How can I help?', refusal: null }, logprobs: null, finish_reason: 'stop' }]);
    expect(r.json.usage).toEqual({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 });
    expect(r.json.id).toBe(`chatcmpl-${r.headers['x-service-job-id']}`);
    expect(r.headers['x-service-ignored-params']).toBeUndefined();
    await expectBilled(accountId, before, 12, 7);
  });

  it('a stream: the same text in chunks, finish, the usage chunk, [DONE]; billed', async () => {
    const { key, accountId } = await h.gw.account();
    emu().enqueue({ kind: 'text', text: 'one two three four five', chunks: 5, usage: { input: 9, output: 5 } });
    const before = await money(h.gw, accountId);
    const r = await chat(key, { model: p.model, messages: hi, stream: true, stream_options: { include_usage: true } });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toContain('text/event-stream');
    const s = assemble(r.text);
    expect(s).toMatchObject({ content: 'one two three four five', finish: 'stop', done: true, error: undefined, calls: [] });
    expect(s.usage).toEqual({ prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 });
    await expectBilled(accountId, before, 9, 5);
  });

  const twoCalls = { kind: 'tool_calls' as const, calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }, { name: 'get_time', arguments: { zone: 'Europe/Paris' } }], usage: { input: 30, output: 12 } };

  it('tool calls (non-stream): call_ ids, names, arguments as JSON strings, finish tool_calls', async () => {
    const { key, accountId } = await h.gw.account();
    emu().enqueue(twoCalls);
    const before = await money(h.gw, accountId);
    const r = await chat(key, { model: p.model, messages: hi, tools });
    expect(r.status).toBe(200);
    const message = r.json.choices[0].message;
    expect(r.json.choices[0].finish_reason).toBe('tool_calls');
    expect(message.content).toBe(p.toolCallContent);
    expect(message.tool_calls).toHaveLength(2);
    const [a, b] = message.tool_calls;
    expect(a).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
    expect(b).toMatchObject({ type: 'function', function: { name: 'get_time' } });
    expect(typeof a.function.arguments).toBe('string');
    expect(JSON.parse(a.function.arguments)).toEqual({ city: 'Paris' });
    expect(JSON.parse(b.function.arguments)).toEqual({ zone: 'Europe/Paris' });
    expect(a.id).toMatch(/^call_[A-Za-z0-9_-]+$/);
    expect(b.id).toMatch(/^call_[A-Za-z0-9_-]+$/);
    expect(a.id).not.toBe(b.id);
    expect(p.toolNames(lastBody(emu()))).toEqual(['get_weather', 'get_time']);
    await expectBilled(accountId, before, 30, 12);
  });

  it('tool calls streamed: each index keeps its own id and arguments; the result equals the non-stream answer', async () => {
    const { key, accountId } = await h.gw.account();
    emu().enqueue(twoCalls);
    const before = await money(h.gw, accountId);
    const r = await chat(key, { model: p.model, messages: hi, tools, stream: true });
    const s = assemble(r.text);
    expect(s.finish).toBe('tool_calls');
    expect(s.done).toBe(true);
    expect(s.calls.map((c) => c.index)).toEqual([0, 1]);
    expect(s.calls.map((c) => c.name)).toEqual(['get_weather', 'get_time']);
    expect(JSON.parse(s.calls[0]?.args ?? '')).toEqual({ city: 'Paris' });
    expect(JSON.parse(s.calls[1]?.args ?? '')).toEqual({ zone: 'Europe/Paris' });
    for (const c of s.calls) expect(c.id).toMatch(/^call_/);
    expect(s.calls[0]?.id).not.toBe(s.calls[1]?.id);
    // The id comes once per index, with the first delta of that call.
    expect(s.toolDeltas.filter((d) => d.id !== undefined).map((d) => d.index)).toEqual([0, 1]);
    expect(s.content).toBe('');
    await expectBilled(accountId, before, 30, 12);
  });

  it('the tool-result round trip reaches the provider in its own format (results matched to their calls)', async () => {
    const { key } = await h.gw.account();
    emu().enqueue(twoCalls);
    const first = await chat(key, { model: p.model, messages: hi, tools });
    const assistant = first.json.choices[0].message;
    const [weather, time] = assistant.tool_calls;
    emu().enqueue(textScenario('It is 21C and 14:00 in Paris.'));
    const second = await chat(key, {
      model: p.model, tools,
      messages: [...hi, assistant, { role: 'tool', tool_call_id: weather.id, content: '21C' }, { role: 'tool', tool_call_id: time.id, content: '14:00' }, { role: 'user', content: 'Thanks' }],
    });
    expect(second.status).toBe(200);
    expect(second.json.choices[0].message.content).toBe('It is 21C and 14:00 in Paris.');
    const sent = p.history(lastBody(emu()));
    // provider_3 has no call ids (results are matched by function name): `id` is undefined there, `name` set.
    const byName = p.provider === 'provider_3';
    expect(sent.calls).toEqual([
      { id: byName ? undefined : weather.id, name: 'get_weather', args: { city: 'Paris' } },
      { id: byName ? undefined : time.id, name: 'get_time', args: { zone: 'Europe/Paris' } },
    ]);
    expect(sent.results.map((x) => [x.id, x.name])).toEqual(byName ? [[undefined, 'get_weather'], [undefined, 'get_time']] : [[weather.id, undefined], [time.id, undefined]]);
    expect(sent.results[0]?.content).toEqual(p.resultOf21C);
  });

  it.each(p.toolChoices)('tool_choice $form on $model reaches the provider as its own field', async (row) => {
    const { key } = await h.gw.account();
    emu().enqueue({ kind: 'tool_calls', calls: [{ name: 'get_weather', arguments: { city: 'Rome' } }] });
    const r = await chat(key, { model: row.model, messages: hi, tools, tool_choice: TOOL_CHOICES[row.form] });
    expect(r.status).toBe(200);
    expect(r.headers['x-service-ignored-params']).toBeUndefined();
    const body = lastBody(emu());
    expect(p.toolChoiceOf(body)).toEqual(row.sent);
    if (row.instruction === undefined) expect(p.system(body)).not.toMatch(/must call/);
    else expect(p.system(body)).toMatch(row.instruction);
    expect(r.json.choices[0].message.tool_calls[0].function.name).toBe('get_weather');
    if (row.form === 'named') expect(r.json.choices[0].finish_reason).toBe(p.namedFinish);
  });

  it('parallel_tool_calls false: forwarded where the spec says F, otherwise dropped and named', async () => {
    const { key } = await h.gw.account();
    const r = await chat(key, { model: p.model, messages: hi, tools, parallel_tool_calls: false });
    expect(r.status).toBe(200);
    const body = lastBody(emu());
    if (p.parallelFalse === 'ignored') {
      expect(r.headers['x-service-ignored-params']).toBe('parallel_tool_calls');
      expect(JSON.stringify(body)).not.toMatch(/parallel/);
    } else {
      expect(r.headers['x-service-ignored-params']).toBeUndefined();
      expect(p.parallelFalse(body)).toEqual(p.parallelFalseSent);
    }
  });

  it('json_object: the provider JSON mode (or an instruction where it has none); the JSON lands in message.content', async () => {
    const { key } = await h.gw.account();
    emu().enqueue(textScenario(ANSWER));
    const r = await chat(key, { model: p.model, messages: [{ role: 'user', content: 'Weather in Oslo as json' }], response_format: { type: 'json_object' } });
    expect(r.status).toBe(200);
    expect(r.json.choices[0].message).toEqual({ role: 'assistant', content: ANSWER, refusal: null });
    const body = lastBody(emu());
    expect(p.jsonObject.native(body)).toEqual(p.jsonObject.expected);
    if (p.jsonObject.instruction) expect(p.system(body)).toContain('Answer with a single JSON object only');
    else expect(p.system(body)).not.toContain('Answer with a single JSON object');
  });

  it('json_schema: native where the model enforces schemas, else an instruction with code fences stripped (streamed too)', async () => {
    const { key } = await h.gw.account();
    const messages = [{ role: 'user', content: 'Weather in Oslo?' }];
    if (p.jsonSchemaNative !== undefined) {
      const native = p.jsonSchemaNative;
      emu().enqueue(textScenario(ANSWER));
      const r = await chat(key, { model: native.model, messages, response_format: jsonSchemaFormat });
      expect(r.json.choices[0].message).toEqual({ role: 'assistant', content: ANSWER, refusal: null });
      const body = lastBody(emu());
      expect(native.schemaOf(body)).toEqual(native.expected(SCHEMA));
      expect(p.system(body)).not.toContain('JSON schema');
    }
    if (p.jsonSchemaInstruction !== undefined) {
      const model = p.jsonSchemaInstruction.model;
      const fenced = `\`\`\`json\n${ANSWER}\n\`\`\``;
      emu().enqueue(textScenario(fenced));
      const r = await chat(key, { model, messages, response_format: jsonSchemaFormat });
      expect(r.json.choices[0].message.content).toBe(ANSWER);
      expect(r.json.choices[0].message.tool_calls).toBeUndefined();
      const instruction = p.system(lastBody(emu()));
      expect(instruction).toContain('JSON schema named "weather"');
      expect(instruction).toContain(JSON.stringify(SCHEMA));
      emu().enqueue({ kind: 'text', text: fenced, chunks: 7 });
      const streamed = assemble((await chat(key, { model, messages, response_format: jsonSchemaFormat, stream: true })).text);
      expect(streamed.content).toBe(ANSWER);
    }
    expect(p.jsonSchemaNative ?? p.jsonSchemaInstruction).toBeDefined();
  });

  it('the developer role reaches the provider as its system text', async () => {
    const { key } = await h.gw.account();
    const r = await chat(key, { model: p.model, messages: [{ role: 'developer', content: 'Be brief.' }, { role: 'system', content: 'Speak English.' }, ...hi] });
    expect(r.status).toBe(200);
    const body = lastBody(emu());
    expect(p.system(body)).toBe('Be brief.\n\nSpeak English.');
    expect(JSON.stringify(body)).not.toContain('"developer"');
  });

  const values: Record<string, unknown> = {
    temperature: 0.3, top_p: 0.8, seed: 4711, frequency_penalty: 0.25, presence_penalty: 0.35, logit_bias: { '42': 5 },
    user: 'end-user-4711', reasoning_effort: 'low', verbosity: 'low', stop: ['END'], max_tokens: 321,
  };

  it('each dropped parameter is named in X-Service-Ignored-Params and absent from what the provider received', async () => {
    const { key } = await h.gw.account();
    const dropped = Object.keys(p.dropped);
    const r = await chat(key, { model: p.model, messages: hi, ...Object.fromEntries(dropped.map((name) => [name, values[name]])) });
    expect(r.status).toBe(200);
    expect(r.headers['x-service-ignored-params']).toBe(dropped.join(', '));
    const body = lastBody(emu());
    for (const [name, read] of Object.entries(p.dropped)) expect(read(body), name).toBeUndefined();
    expect(JSON.stringify(body)).not.toContain('4711');
  });

  it('each forwarded parameter is present in the provider own field', async () => {
    const { key } = await h.gw.account();
    const r = await chat(key, { model: p.forwardModel, messages: hi, ...Object.fromEntries(Object.keys(p.forwarded).map((name) => [name, values[name]])) });
    expect(r.status).toBe(200);
    expect(r.headers['x-service-ignored-params']).toBeUndefined();
    const body = lastBody(emu());
    for (const [name, read] of Object.entries(p.forwarded)) expect(read(body), name).toEqual(values[name]);
  });

  it.each(p.textFinishes)('upstream finish %s → %j (non-stream and stream)', async (upstream, ours) => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    emu().enqueue(textScenario('partial answer', upstream, { input: 10, output: 3 }));
    const r = await chat(key, { model: p.model, messages: hi });
    emu().enqueue(textScenario('partial answer', upstream, { input: 10, output: 3 }));
    const s = assemble((await chat(key, { model: p.model, messages: hi, stream: true })).text);
    if (typeof ours === 'string') {
      expect(r.status).toBe(200);
      expect(r.json.choices[0].finish_reason).toBe(ours);
      expect(r.json.choices[0].message.content).toBe('partial answer');
      expect(s).toMatchObject({ finish: ours, content: 'partial answer', done: true });
      await expectBilled(accountId, before, 20, 6);
    } else {
      // The provider aborted the answer: a provider failure, refunded.
      expect(r.status).toBe(502);
      expect(r.json.error.code).toBe(ours.error);
      expect(s.error?.code).toBe(ours.error);
      expect(s.done).toBe(false);
      await expectRefunded(accountId, before);
    }
  });

  it(`a tool-call answer (upstream ${p.toolFinish}) finishes with tool_calls`, async () => {
    const { key } = await h.gw.account();
    emu().enqueue({ kind: 'tool_calls', calls: [{ name: 'get_time', arguments: { zone: 'UTC' } }] });
    const r = await chat(key, { model: p.model, messages: hi, tools });
    expect(r.json.choices[0].finish_reason).toBe('tool_calls');
  });

  it('usage maps to prompt/completion counting every billed token once, with the cache and reasoning details (non-stream and stream)', async () => {
    const { key, accountId } = await h.gw.account();
    const { scenario, prompt, completion, details } = p.usage;
    const expected = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, ...details };
    let before = await money(h.gw, accountId);
    emu().enqueue(textScenario('counted', undefined, scenario));
    const r = await chat(key, { model: p.model, messages: hi });
    expect(r.json.usage).toEqual(expected);
    await expectBilled(accountId, before, prompt, completion);
    before = await money(h.gw, accountId);
    emu().enqueue(textScenario('counted', undefined, scenario));
    const s = assemble((await chat(key, { model: p.model, messages: hi, stream: true, stream_options: { include_usage: true } })).text);
    expect(s.usage).toEqual(expected);
    await expectBilled(accountId, before, prompt, completion);
  });

  it('a missing usage is estimated at about 4 characters per token and billed on that', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    emu().enqueue({ kind: 'text', text: 'x'.repeat(40), usage: 'none' });
    const r = await chat(key, { model: p.model, messages: hi });
    expect(r.json.usage.completion_tokens).toBe(10);
    const prompt = r.json.usage.prompt_tokens;
    expect(prompt).toBeGreaterThan(0);
    await expectBilled(accountId, before, prompt, 10);
  });

  it.each(p.errors.filter((row) => row.refusesKey !== true))('upstream $status → $ours $code, refunded in full', async (row) => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    emu().enqueue({ kind: 'error', status: row.status, ...(row.body === undefined ? {} : { body: row.body }) });
    const r = await chat(key, { model: p.model, messages: hi });
    expect(r.status).toBe(row.ours);
    expect(r.json.error.code).toBe(row.code);
    expect(r.json.error.param).toBeNull();
    if (row.message !== undefined) expect(r.json.error.message).toMatch(row.message);
    await expectRefunded(accountId, before);
    // The same before a stream started: a plain error answer, no event stream.
    emu().enqueue({ kind: 'error', status: row.status, ...(row.body === undefined ? {} : { body: row.body }) });
    const streamed = await chat(key, { model: p.model, messages: hi, stream: true });
    expect(streamed.status).toBe(row.ours);
    expect(streamed.json.error.code).toBe(row.code);
    await expectRefunded(accountId, before);
  });

  // A refused key rests 5 minutes, so each of these runs on a gateway of its own (the same emulators).
  it.each(p.errors.filter((row) => row.refusesKey === true))('upstream $status refuses the gateway key → $ours $code, refunded; the key rests: the next run is refused without a call', async (row) => {
    const gw: TestGateway = await startGateway(chatGatewayEnv(h));
    try {
      const { key, accountId } = await gw.account();
      const before = await money(gw, accountId);
      emu().enqueue({ kind: 'error', status: row.status, ...(row.body === undefined ? {} : { body: row.body }) });
      const r = await gw.api('/chat/completions', { key, body: { model: p.model, messages: hi } });
      expect(r.status).toBe(row.ours);
      expect(r.json.error.code).toBe(row.code);
      expect(r.json.error.param).toBeNull();
      expect(await money(gw, accountId)).toEqual({ balance: before.balance, held: 0 });
      const calls = emu().requests.length;
      const streamed = await gw.api('/chat/completions', { key, body: { model: p.model, messages: hi, stream: true } });
      expect(streamed.status).toBe(row.ours);
      expect(streamed.json.error.code).toBe(row.code);
      expect(emu().requests).toHaveLength(calls);
      expect(await money(gw, accountId)).toEqual({ balance: before.balance, held: 0 });
    } finally {
      await gw.close();
    }
  });

  it('an error inside a started stream: the final event is the error, no [DONE], refunded', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    emu().enqueue({ kind: 'stream_error', afterChunks: 2, text: 'one two three four five six' });
    const r = await chat(key, { model: p.model, messages: hi, stream: true });
    expect(r.status).toBe(200);
    const s = assemble(r.text);
    expect(s.error?.code).toBe('upstream_error');
    expect(s.done).toBe(false);
    expect(s.finish).toBeNull();
    await expectRefunded(accountId, before);
  });

  it('a stream cut before its end: upstream_error, refunded', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    emu().enqueue({ kind: 'cut', afterChunks: 2, text: 'one two three four five six' });
    const s = assemble((await chat(key, { model: p.model, messages: hi, stream: true })).text);
    expect(s.error?.code).toBe('upstream_error');
    expect(s.done).toBe(false);
    await expectRefunded(accountId, before);
  });
});
