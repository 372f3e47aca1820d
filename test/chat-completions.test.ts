/** POST /chat/completions, non-stream, against the provider_1 and provider_7 emulators. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chatEntry } from './fixtures/catalog.ts';
import { costMicro, money, startChatHarness, type ChatHarness } from './helpers/chat.ts';

let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness({}, [
    chatEntry('claude-exclusive', 'provider_2', {
      provider_model_id: 'claude-haiku-4-5-test',
      chat: { params: ['temperature', 'top_p'], exclusive_sampling: true, json_schema: 'native', images: null, pdf: false },
    }),
  ]);
});
afterAll(async () => h.close());
beforeEach(() => {
  h.openai.reset();
  h.deepseek.reset();
  h.anthropic.reset();
});

const hi = [{ role: 'user', content: 'Hello there' }];
const lastBody = (e: { requests: { body: unknown }[] }) => e.requests[e.requests.length - 1]?.body as Record<string, unknown>;

describe('a paid answer', () => {
  it('answers in the chat-completions format and settles the provider usage to the micro-credit', async () => {
    const { key, accountId } = await h.gw.account({ credits: 10 });
    h.openai.enqueue({ kind: 'text', text: 'Hi! How can I help?', usage: { input: 12, output: 7 } });
    const before = await money(h.gw, accountId);
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi } });
    expect(r.status).toBe(200);
    const jobId = r.headers['x-service-job-id'] as string;
    expect(jobId).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.json).toEqual({
      id: `chatcmpl-${jobId}`,
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'gpt-test',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi! How can I help?', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
      system_fingerprint: 'svc-gpt-test',
    });
    expect(r.headers['x-ratelimit-limit']).toBe('600');
    expect(r.headers['x-ratelimit-remaining']).toBe('599');
    expect(r.headers['x-ratelimit-reset']).toBe('60');
    expect(r.headers['x-service-ignored-params']).toBeUndefined();
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - costMicro(12, 7), held: 0 });
    const ledger = (await h.gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).json;
    expect(ledger.filter((e: { job_id: string }) => e.job_id === jobId).map((e: { kind: string }) => e.kind)).toEqual(['settle', 'hold']);
  });

  it('rate-limit and job headers are not exposed to cross-origin browser JavaScript', async () => {
    const { key } = await h.gw.account();
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi }, headers: { origin: 'https://evil.example' } });
    expect(r.status).toBe(200);
    expect(r.headers['x-service-job-id']).toBeDefined();
    expect(r.headers['access-control-expose-headers']).toBeUndefined();
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
  });

  it("a key's usage counts its runs at cost, and rotation carries this month's usage", async () => {
    const { key, keyId } = await h.gw.account();
    h.openai.enqueue({ kind: 'text', text: 'a', usage: { input: 100, output: 10 } });
    await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi } });
    h.openai.enqueue({ kind: 'error', status: 500 });
    await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi } });
    const usage = (await h.gw.admin('GET', `/admin/v1/keys/${keyId}/usage`)).json;
    expect(usage.day_credits).toBe(costMicro(100, 10) / 1_000_000);
    expect(usage.month_credits).toBe(costMicro(100, 10) / 1_000_000);
    const rotated = (await h.gw.admin('POST', `/admin/v1/keys/${keyId}/rotate`)).json;
    expect((await h.gw.admin('GET', `/admin/v1/keys/${rotated.id}/usage`)).json.month_credits).toBe(costMicro(100, 10) / 1_000_000);
  });

  it('a provider model id resolves; the model field echoes the request', async () => {
    const { key } = await h.gw.account();
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test-2026-01-01', messages: hi } });
    expect(r.status).toBe(200);
    expect(r.json.model).toBe('gpt-test-2026-01-01');
    expect(r.json.system_fingerprint).toBe('svc-gpt-test');
    expect(lastBody(h.openai).model).toBe('gpt-test-2026-01-01');
  });

  it('without provider usage, ~4 characters per token are billed', async () => {
    const { key, accountId } = await h.gw.account({ credits: 10 });
    h.openai.enqueue({ kind: 'text', text: 'x'.repeat(40), usage: 'none' });
    const before = await money(h.gw, accountId);
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi } });
    expect(r.json.usage.completion_tokens).toBe(10);
    const prompt = r.json.usage.prompt_tokens;
    expect(prompt).toBeGreaterThan(0);
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - costMicro(prompt, 10), held: 0 });
  });

  it('tool calls come back with finish_reason tool_calls; the tool result round trip reaches the provider', async () => {
    const { key } = await h.gw.account();
    const tools = [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    h.openai.enqueue({ kind: 'tool_calls', calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi, tools, tool_choice: 'required', parallel_tool_calls: false } });
    expect(r.json.choices[0].finish_reason).toBe('tool_calls');
    const call = r.json.choices[0].message.tool_calls[0];
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
    expect(lastBody(h.openai)).toMatchObject({ tool_choice: 'required', parallel_tool_calls: false, tools });
    const followUp = await h.gw.api('/chat/completions', {
      key,
      body: { model: 'gpt-test', tools, messages: [...hi, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: '21C' }] },
    });
    expect(followUp.status).toBe(200);
    const sent = lastBody(h.openai).messages as Record<string, unknown>[];
    expect(sent[2]).toEqual({ role: 'tool', tool_call_id: call.id, content: '21C' });
    expect(sent[1]).toMatchObject({ role: 'assistant', tool_calls: [{ id: call.id, type: 'function', function: { name: 'get_weather' } }] });
  });
});

describe('reasoning, refusals, named tools', () => {
  it('reasoning_content appears only when the provider returns reasoning text, streamed before content', async () => {
    const { key } = await h.gw.account();
    h.deepseek.enqueue({ kind: 'text', text: 'It is 42.', reasoning: 'Six times seven.' });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'deepseek-test', messages: hi } });
    expect(r.json.choices[0].message).toEqual({ role: 'assistant', content: 'It is 42.', refusal: null, reasoning_content: 'Six times seven.' });
    const plain = await h.gw.api('/chat/completions', { key, body: { model: 'deepseek-test', messages: hi } });
    expect('reasoning_content' in plain.json.choices[0].message).toBe(false);
    expect(lastBody(h.deepseek).thinking).toEqual({ type: 'disabled' });
    h.deepseek.enqueue({ kind: 'text', text: 'It is 42.', reasoning: 'Six times seven.', chunks: 3 });
    const streamed = await h.gw.api('/chat/completions', { key, body: { model: 'deepseek-test', messages: hi, stream: true } });
    const deltas = streamed.text.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)).choices[0]?.delta ?? {});
    const reasoning = deltas.map((d: { reasoning_content?: string }) => d.reasoning_content ?? '').join('');
    expect(reasoning).toBe('Six times seven.');
    const firstContent = deltas.findIndex((d: { content?: string }) => (d.content ?? '') !== '');
    const lastReasoning = deltas.map((d: { reasoning_content?: string }) => d.reasoning_content !== undefined).lastIndexOf(true);
    expect(lastReasoning).toBeLessThan(firstContent);
  });

  it('a refusal comes back as message.refusal', async () => {
    const { key } = await h.gw.account();
    h.openai.enqueue({ kind: 'text', text: '', refusal: 'I cannot help with that.' });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi } });
    expect(r.json.choices[0].message.refusal).toBe('I cannot help with that.');
    expect(r.json.choices[0].finish_reason).toBe('stop');
  });

  it('a named tool_choice reaches the provider in its format; finish reasons map', async () => {
    const { key } = await h.gw.account();
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
    h.openai.enqueue({ kind: 'tool_calls', calls: [{ name: 'lookup', arguments: {} }] });
    await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi, tools, tool_choice: { type: 'function', function: { name: 'lookup' } } } });
    expect(lastBody(h.openai).tool_choice).toEqual({ type: 'function', function: { name: 'lookup' } });
    for (const [upstream, ours] of [['length', 'length'], ['content_filter', 'content_filter'], ['stop', 'stop']]) {
      h.openai.enqueue({ kind: 'text', text: 'x', finish: upstream });
      const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi } });
      expect(r.json.choices[0].finish_reason, upstream).toBe(ours);
    }
    h.deepseek.enqueue({ kind: 'text', text: 'x', finish: 'insufficient_system_resource' });
    const aborted = await h.gw.api('/chat/completions', { key, body: { model: 'deepseek-test', messages: hi } });
    expect(aborted.status).toBe(502);
    expect(aborted.json.error.code).toBe('upstream_error');
  });
});

describe('the provider plan', () => {
  it('S parameters reach models that take them; D and unsupported S parameters are dropped and named', async () => {
    const { key } = await h.gw.account();
    const r = await h.gw.api('/chat/completions', {
      key,
      body: { model: 'gpt-test', messages: hi, temperature: 0.5, top_p: 0.9, seed: 7, user: 'u1', logit_bias: { '50256': -100 }, reasoning_effort: 'low', verbosity: 'low', frequency_penalty: 0.1, some_new_field: true },
    });
    expect(r.status).toBe(200);
    expect(r.headers['x-service-ignored-params']).toBe('some_new_field, reasoning_effort, verbosity');
    const sent = lastBody(h.openai);
    expect(sent).toMatchObject({ temperature: 0.5, top_p: 0.9, seed: 7, user: 'u1', logit_bias: { '50256': -100 }, frequency_penalty: 0.1 });
    for (const dropped of ['reasoning_effort', 'verbosity', 'some_new_field']) expect(sent[dropped], dropped).toBeUndefined();
  });

  it('a reasoning model takes reasoning_effort and max_completion_tokens, keeps the developer role, drops temperature', async () => {
    const { key } = await h.gw.account();
    const r = await h.gw.api('/chat/completions', {
      key,
      body: { model: 'gpt-reasoner', messages: [{ role: 'developer', content: 'Be brief.' }, ...hi], reasoning_effort: 'high', temperature: 1, max_tokens: 500 },
    });
    expect(r.headers['x-service-ignored-params']).toBe('temperature');
    const sent = lastBody(h.openai);
    expect(sent).toMatchObject({ reasoning_effort: 'high', max_completion_tokens: 500 });
    expect(sent.max_tokens).toBeUndefined();
    expect((sent.messages as { role: string }[])[0]?.role).toBe('developer');
  });

  it('provider_7: seed, user, logit_bias, parallel_tool_calls dropped; developer sent as system; json_schema as json_object plus instruction', async () => {
    const { key } = await h.gw.account();
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    h.deepseek.enqueue({ kind: 'text', text: '```json\n{"answer":"42"}\n```' });
    const r = await h.gw.api('/chat/completions', {
      key,
      body: {
        model: 'deepseek-test', messages: [{ role: 'developer', content: 'Reply in json.' }, ...hi], seed: 1, user: 'u', logit_bias: { '1': 1 },
        tools: [{ type: 'function', function: { name: 'f' } }], parallel_tool_calls: true, temperature: 0.3,
        response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
      },
    });
    expect(r.status).toBe(200);
    expect(r.headers['x-service-ignored-params']).toBe('seed, logit_bias, parallel_tool_calls, user');
    const sent = lastBody(h.deepseek);
    expect(sent.response_format).toEqual({ type: 'json_object' });
    expect(sent.temperature).toBe(0.3);
    for (const dropped of ['seed', 'user', 'logit_bias', 'parallel_tool_calls']) expect(sent[dropped], dropped).toBeUndefined();
    const messages = sent.messages as { role: string; content: string }[];
    expect(messages[0]?.role).toBe('system');
    expect(messages[0]?.content).toContain('"answer"');
    expect(messages[1]).toEqual({ role: 'system', content: 'Reply in json.' });
    expect(r.json.choices[0].message.content).toBe('{"answer":"42"}');
  });

  it('a model that refuses temperature with top_p keeps temperature; top_p is dropped and named', async () => {
    const { key } = await h.gw.account();
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'claude-exclusive', messages: hi, temperature: 0.4, top_p: 0.9 } });
    expect(r.status).toBe(200);
    expect(r.headers['x-service-ignored-params']).toBe('top_p');
    const sent = lastBody(h.anthropic);
    expect(sent.temperature).toBe(0.4);
    expect(sent.top_p).toBeUndefined();
    await h.gw.api('/chat/completions', { key, body: { model: 'claude-exclusive', messages: hi, top_p: 0.9 } });
    expect(lastBody(h.anthropic).top_p).toBe(0.9);
  });

  it('tool_choice and parallel_tool_calls without tools are ignored and named', async () => {
    const { key } = await h.gw.account();
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi, tool_choice: 'auto', parallel_tool_calls: false } });
    expect(r.headers['x-service-ignored-params']).toBe('tool_choice, parallel_tool_calls');
    expect(lastBody(h.openai).tool_choice).toBeUndefined();
  });

  it('max_tokens: default 4096, capped at the model limit, max_completion_tokens wins, and exactly that is held', async () => {
    const { key, accountId } = await h.gw.account({ credits: 100 });
    await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi } });
    expect(lastBody(h.openai).max_tokens).toBe(4096);
    await h.gw.api('/chat/completions', { key, body: { model: 'deepseek-test', messages: hi, max_tokens: 100000 } });
    expect(lastBody(h.deepseek).max_tokens).toBe(8192);
    await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi, max_tokens: 300, max_completion_tokens: 200 } });
    expect(lastBody(h.openai).max_tokens).toBe(200);
    // The hold covers exactly the output cap: seen while the provider hangs.
    h.openai.enqueue({ kind: 'text', text: 'slow' }, { delayMs: 300 });
    const pending = h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi, max_tokens: 1000 } });
    await new Promise((r) => setTimeout(r, 150));
    const held = (await money(h.gw, accountId)).held;
    expect(held).toBeGreaterThanOrEqual(1000 * 1000);
    expect(held).toBeLessThan(1000 * 1000 + 100 * 125);
    await pending;
  });
});

describe('refusals before the run reserve nothing', () => {
  const cases: [string, Record<string, unknown>, number, string, string | null][] = [
    ['unknown model', { model: 'nope', messages: hi }, 404, 'model_not_found', 'model'],
    ['image slug on chat', { model: 'pic-1', messages: hi }, 404, 'model_not_found', 'model'],
    ['text model no chat provider serves', { model: 'llama-hosted', messages: hi }, 400, 'model_not_supported', 'model'],
    ['unpriced model', { model: 'gpt-unpriced', messages: hi }, 503, 'model_unavailable', 'model'],
    ['removed model', { model: 'gpt-gone', messages: hi }, 503, 'model_unavailable', 'model'],
    ['duplicate entry', { model: 'gpt-alias', messages: hi }, 503, 'model_unavailable', 'model'],
    ['n above 1', { model: 'gpt-test', messages: hi, n: 2 }, 400, 'invalid_request', 'n'],
    ['function role', { model: 'gpt-test', messages: [{ role: 'function', content: 'x', name: 'f' }] }, 400, 'invalid_request', 'messages[0].role'],
    ['image part on a text-only provider', { model: 'deepseek-test', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] }, 400, 'unsupported_content', 'messages[0].content[0]'],
    ['file_id part', { model: 'gpt-test', messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'file', file: { file_id: 'file-1' } }] }] }, 400, 'unsupported_content', 'messages[0].content[1]'],
    ['input_audio part', { model: 'gpt-test', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] }] }, 400, 'unsupported_content', 'messages[0].content[0]'],
  ];
  for (const [name, body, status, code, param] of cases) {
    it(`${name} → ${status} ${code}`, async () => {
      const { key, accountId } = await h.gw.account();
      const before = await money(h.gw, accountId);
      const r = await h.gw.api('/chat/completions', { key, body });
      expect(r.status).toBe(status);
      expect(r.json.error).toMatchObject({ code, param });
      expect(r.headers['x-ratelimit-limit']).toBe('600');
      expect(r.headers['x-service-job-id']).toBeUndefined();
      expect(await money(h.gw, accountId)).toEqual(before);
      expect(h.openai.requests).toHaveLength(0);
    });
  }

  it('402 insufficient_credits when the balance is below the hold; nothing reserved or sent', async () => {
    const { key, accountId } = await h.gw.account({ credits: 0.001 });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi } });
    expect(r.status).toBe(402);
    expect(r.json.error).toMatchObject({ code: 'insufficient_credits', type: 'insufficient_credits_error', param: null });
    expect(await money(h.gw, accountId)).toEqual({ balance: 1000, held: 0 });
    expect(h.openai.requests).toHaveLength(0);
  });
});

describe('provider failures are refunded in full', () => {
  const cases: [number, number, string][] = [
    [400, 400, 'provider_rejected_request'],
    [413, 400, 'provider_rejected_request'],
    [422, 400, 'provider_rejected_request'],
    [429, 429, 'upstream_rate_limited'],
    [500, 502, 'upstream_error'],
    [503, 502, 'upstream_error'],
    [404, 503, 'model_unavailable'],
  ];
  for (const [upstream, status, code] of cases) {
    it(`provider ${upstream} → ${status} ${code}`, async () => {
      const { key, accountId } = await h.gw.account();
      const before = await money(h.gw, accountId);
      h.openai.enqueue({ kind: 'error', status: upstream });
      const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi } });
      expect(r.status).toBe(status);
      expect(r.json.error.code).toBe(code);
      expect(r.headers['x-service-job-id']).toBeDefined();
      expect(await money(h.gw, accountId)).toEqual(before);
      const kinds = (await h.gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).json.map((e: { kind: string }) => e.kind);
      expect(kinds.slice(0, 2)).toEqual(['refund', 'hold']);
    });
  }

  it("the provider's 400 message is passed through, cut at 500 characters", async () => {
    const { key } = await h.gw.account();
    const message = 'This model maximum context length is 128000 tokens. '.repeat(20);
    h.openai.enqueue({ kind: 'error', status: 400, body: { error: { message, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } } });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi } });
    expect(r.json.error.message).toBe(message.slice(0, 500));
  });

  it('no answer within PROVIDER_TIMEOUT_MS (non-stream) → 504 provider_timeout, refunded', async () => {
    const slow = await startChatHarness({ PROVIDER_TIMEOUT_MS: '300' });
    try {
      const { key, accountId } = await slow.gw.account();
      const before = await money(slow.gw, accountId);
      slow.openai.enqueue({ kind: 'hang' });
      const r = await slow.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi } });
      expect(r.status).toBe(504);
      expect(r.json.error).toMatchObject({ code: 'provider_timeout', param: null });
      expect(r.headers['x-service-job-id']).toBeDefined();
      expect(await money(slow.gw, accountId)).toEqual(before);
    } finally {
      await slow.close();
    }
  });

  it('a connection failure → 502 upstream_error, refunded', async () => {
    const dead = await startChatHarness({ PROVIDER_1_BASE_URL: 'http://127.0.0.1:9/v1' });
    try {
      const { key, accountId } = await dead.gw.account();
      const before = await money(dead.gw, accountId);
      const r = await dead.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi } });
      expect(r.status).toBe(502);
      expect(r.json.error.code).toBe('upstream_error');
      expect(await money(dead.gw, accountId)).toEqual(before);
    } finally {
      await dead.close();
    }
  });
});
