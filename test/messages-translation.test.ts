/**
 * The Messages route's translation for the providers that do not speak it (provider_1 here, over
 * its real wire format): what each Messages field becomes on the provider's side, what comes
 * back, and what is dropped (named in X-Service-Ignored-Params, or quietly for Claude Code's hints).
 */
import { request as undiciRequest } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { costMicro, money, startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { image } from './helpers/media.ts';

let h: ChatHarness;
let key: string;
let accountId: string;
beforeAll(async () => {
  h = await startChatHarness();
  ({ key, accountId } = await h.gw.account({ credits: 1000 }));
});
afterAll(async () => h.close());
beforeEach(() => {
  h.openai.reset();
  h.deepseek.reset();
});

async function messages(body: Record<string, unknown>) {
  const r = await undiciRequest(`${h.gw.url}/api/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });
  return { status: r.statusCode, headers: r.headers, json: (await r.body.json()) as Record<string, unknown> };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the provider's request is inspected freely
const sentTo = (emu: ChatHarness['openai']): any => emu.requests[emu.requests.length - 1]?.body;

describe('Messages → provider_1 chat completions', () => {
  it('system (string and system turns), turns, tools, tool_choice, stop sequences', async () => {
    h.openai.enqueue({ kind: 'text', text: 'ok' });
    const r = await messages({
      model: 'gpt-test',
      max_tokens: 100,
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'Call it.', signature: 'sig' }, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '20C' }], is_error: false }, { type: 'text', text: 'And tomorrow?' }] },
      ],
      tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } }, cache_control: { type: 'ephemeral' } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      stop_sequences: ['END'],
      temperature: 0.3,
    });
    expect(r.status).toBe(200);
    const sent = sentTo(h.openai);
    expect(sent.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'toolu_1', content: '20C' },
      { role: 'user', content: [{ type: 'text', text: 'And tomorrow?' }] },
    ]);
    expect(sent.tools).toEqual([{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }]);
    expect(sent.tool_choice).toBe('required');
    expect(sent.parallel_tool_calls).toBe(false);
    expect(sent.stop).toEqual(['END']);
    expect(sent.temperature).toBe(0.3);
    expect(r.headers['x-service-ignored-params']).toBeUndefined();
  });

  it('an image inside a tool result follows the tool message in a user turn', async () => {
    h.openai.enqueue({ kind: 'text', text: 'A red square.' });
    const data = image('png', 8, 8).split(',')[1] as string;
    const r = await messages({
      model: 'gpt-test',
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'Take a screenshot.' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_2', name: 'screenshot', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'taken' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data } }] }] },
      ],
      tools: [{ name: 'screenshot', input_schema: { type: 'object', properties: {} } }],
    });
    expect(r.status).toBe(200);
    const sent = sentTo(h.openai);
    expect(sent.messages.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'toolu_2', content: 'taken' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${data}` } }] },
    ]);
  });

  it('thinking budget → reasoning effort on a reasoning model; top_k named; metadata and context_management dropped quietly', async () => {
    h.openai.enqueue({ kind: 'text', text: 'Thought.', reasoning: 'Hmm.' });
    const r = await messages({
      model: 'gpt-reasoner',
      max_tokens: 2_000,
      thinking: { type: 'enabled', budget_tokens: 10_000 },
      top_k: 5,
      metadata: { user_id: '{"session_id":"s"}' },
      context_management: { edits: [] },
      messages: [{ role: 'user', content: 'Think.' }],
    });
    expect(r.status).toBe(200);
    expect(sentTo(h.openai).reasoning_effort).toBe('medium');
    expect(sentTo(h.openai).user).toBeUndefined();
    expect(r.headers['x-service-ignored-params']).toBe('top_k');
  });

  it('output_config.format → structured output; stop reasons: length → max_tokens, tool calls → tool_use', async () => {
    h.openai.enqueue({ kind: 'text', text: '{"a":1}', finish: 'length' });
    const schema = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'], additionalProperties: false };
    const r = await messages({ model: 'gpt-test', max_tokens: 5, output_config: { format: { type: 'json_schema', schema } }, messages: [{ role: 'user', content: 'JSON' }] });
    expect(sentTo(h.openai).response_format).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema, strict: true } });
    expect(r.json).toMatchObject({ stop_reason: 'max_tokens', content: [{ type: 'text', text: '{"a":1}' }] });
  });

  it('max_tokens beyond the model limit is held at the limit (Claude Code sends 32,000)', async () => {
    h.deepseek.enqueue({ kind: 'text', text: 'ok', usage: { input: 10, output: 2 } });
    const before = await money(h.gw, accountId);
    const r = await messages({ model: 'deepseek-test', max_tokens: 32_000, messages: [{ role: 'user', content: 'Hi' }] });
    expect(r.status).toBe(200);
    expect(sentTo(h.deepseek).max_tokens).toBe(8192);
    expect(before.balance - (await money(h.gw, accountId)).balance).toBe(costMicro(10, 2));
    const ledger = await h.gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`);
    const hold = (ledger.json as { kind: string; credits: number; job_id: string }[]).find((e) => e.kind === 'hold' && e.job_id === r.headers['x-service-job-id']);
    // 8,192 output tokens at 1,000 micro-credits, plus a small input estimate at 125.
    expect(Math.round((hold?.credits ?? 0) * 1e6)).toBeGreaterThan(8192 * 1000);
    expect(Math.round((hold?.credits ?? 0) * 1e6)).toBeLessThan(8192 * 1000 + 100 * 125);
  });
});
