/**
 * provider_2 (Anthropic Messages) and provider_3 (Gemini) translation details the
 * cross-provider table does not reach: reasoning, refusals, a blocked prompt, images
 * and PDFs, turn merging, tool-loop rules, defaults.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { costMicro, money, startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { assemble, lastBody, WEATHER_TOOL, type Wire } from './helpers/providers.ts';

let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness();
});
afterAll(async () => h.close());
beforeEach(() => {
  h.anthropic.reset();
  h.gemini.reset();
});

const hi = [{ role: 'user', content: 'Hello there' }];
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const PDF_DATA = 'JVBERi0xLjQKMSAwIG9iaiA8PCAvVHlwZSAvQ2F0YWxvZyAvUGFnZXMgMiAwIFIgPj4gZW5kb2JqCjIgMCBvYmogPDwgL1R5cGUgL1BhZ2VzIC9LaWRzIFszIDAgUl0gL0NvdW50IDEgPj4gZW5kb2JqCjMgMCBvYmogPDwgL1R5cGUgL1BhZ2UgL1BhcmVudCAyIDAgUiA+PiBlbmRvYmoKJSVFT0YK';
const PDF = `data:application/pdf;base64,${PDF_DATA}`;

describe('reasoning', () => {
  it('provider_2 reasoning models think (adaptive); thinking blocks become reasoning_content, streamed before the content', async () => {
    const { key } = await h.gw.account();
    h.anthropic.enqueue({ kind: 'text', text: 'It is 42.', reasoning: 'Six times seven.' });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'claude-test', messages: hi } });
    expect(r.json.choices[0].message).toEqual({ role: 'assistant', content: 'It is 42.', refusal: null, reasoning_content: 'Six times seven.' });
    expect(lastBody(h.anthropic).thinking).toEqual({ type: 'adaptive' });
    h.anthropic.enqueue({ kind: 'text', text: 'It is 42.', reasoning: 'Six times seven.', chunks: 3 });
    const streamed = await h.gw.api('/chat/completions', { key, body: { model: 'claude-test', messages: hi, stream: true } });
    const s = assemble(streamed.text);
    expect(s).toMatchObject({ content: 'It is 42.', reasoning: 'Six times seven.', finish: 'stop' });
    expect(streamed.text.indexOf('reasoning_content')).toBeLessThan(streamed.text.indexOf('"content":"It'));
    // A model without the reasoning fact does not think, and no reasoning_content appears.
    h.anthropic.enqueue({ kind: 'text', text: 'Plain.' });
    const plain = await h.gw.api('/chat/completions', { key, body: { model: 'claude-legacy', messages: hi } });
    expect('reasoning_content' in plain.json.choices[0].message).toBe(false);
    expect(lastBody(h.anthropic).thinking).toBeUndefined();
  });

  it('provider_2: no thinking while a tool loop is open (its signed thinking blocks cannot be echoed back)', async () => {
    const { key } = await h.gw.account();
    const messages = [...hi, { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] }, { role: 'tool', tool_call_id: 'call_1', content: '3C' }];
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'claude-test', messages, tools: [WEATHER_TOOL] } });
    expect(r.status).toBe(200);
    expect(lastBody(h.anthropic).thinking).toBeUndefined();
  });

  it('provider_3 reasoning models ask for thought summaries; thought parts become reasoning_content', async () => {
    const { key } = await h.gw.account();
    h.gemini.enqueue({ kind: 'text', text: 'It is 42.', reasoning: 'Six times seven.' });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gemini-test', messages: hi } });
    expect(r.json.choices[0].message).toEqual({ role: 'assistant', content: 'It is 42.', refusal: null, reasoning_content: 'Six times seven.' });
    expect(lastBody(h.gemini).generationConfig.thinkingConfig).toEqual({ includeThoughts: true });
    h.gemini.enqueue({ kind: 'text', text: 'It is 42.', reasoning: 'Six times seven.', chunks: 3 });
    const s = assemble((await h.gw.api('/chat/completions', { key, body: { model: 'gemini-test', messages: hi, stream: true } })).text);
    expect(s).toMatchObject({ content: 'It is 42.', reasoning: 'Six times seven.', finish: 'stop' });
  });
});

describe('refusals and blocked prompts', () => {
  it('provider_2 refusal: finish content_filter, the explanation in message.refusal, the text so far in content', async () => {
    const { key } = await h.gw.account();
    h.anthropic.enqueue({ kind: 'text', text: 'Partial', refusal: 'Not allowed.', finish: 'refusal' });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'claude-legacy', messages: hi } });
    expect(r.json.choices[0]).toMatchObject({ finish_reason: 'content_filter', message: { content: 'Partial', refusal: 'Not allowed.' } });
    h.anthropic.enqueue({ kind: 'text', text: 'Partial', refusal: 'Not allowed.', finish: 'refusal' });
    const s = assemble((await h.gw.api('/chat/completions', { key, body: { model: 'claude-legacy', messages: hi, stream: true } })).text);
    expect(s).toMatchObject({ content: 'Partial', refusal: 'Not allowed.', finish: 'content_filter', done: true });
  });

  it('provider_3 blocked prompt (HTTP 200, no candidates): empty content, content_filter, the prompt usage billed (stream too)', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    h.gemini.enqueue({ kind: 'blocked' });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gemini-test', messages: hi } });
    expect(r.status).toBe(200);
    expect(r.json.choices[0]).toMatchObject({ finish_reason: 'content_filter', message: { content: '', refusal: null } });
    expect(r.json.usage.completion_tokens).toBe(0);
    const prompt = r.json.usage.prompt_tokens;
    expect(prompt).toBeGreaterThan(0);
    h.gemini.enqueue({ kind: 'blocked' });
    const s = assemble((await h.gw.api('/chat/completions', { key, body: { model: 'gemini-test', messages: hi, stream: true, stream_options: { include_usage: true } } })).text);
    expect(s).toMatchObject({ content: '', finish: 'content_filter', done: true, error: undefined });
    expect(s.usage).toEqual({ prompt_tokens: prompt, completion_tokens: 0, total_tokens: prompt });
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - 2 * costMicro(prompt, 0), held: 0 });
  });
});

describe('content parts', () => {
  const parts = [
    { type: 'text', text: 'What is in these?' },
    { type: 'image_url', image_url: { url: PNG, detail: 'low' } },
    { type: 'file', file: { filename: 'doc.pdf', file_data: PDF } },
  ];

  it('provider_2: base64 and https images as image blocks, PDFs as document blocks', async () => {
    const { key } = await h.gw.account();
    const r = await h.gw.api('/chat/completions', {
      key, body: { model: 'claude-test', messages: [{ role: 'user', content: [...parts, { type: 'image_url', image_url: 'https://example.com/cat.jpg' }] }] },
    });
    expect(r.status).toBe(200);
    expect(lastBody(h.anthropic).messages[0].content).toEqual([
      { type: 'text', text: 'What is in these?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.split(',')[1] } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF_DATA } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
  });

  it('provider_3: base64 images and PDFs as inlineData', async () => {
    const { key } = await h.gw.account();
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gemini-test', messages: [{ role: 'user', content: parts }] } });
    expect(r.status).toBe(200);
    expect(lastBody(h.gemini).contents[0].parts).toEqual([
      { text: 'What is in these?' },
      { inlineData: { mimeType: 'image/png', data: PNG.split(',')[1] } },
      { inlineData: { mimeType: 'application/pdf', data: PDF_DATA } },
    ]);
  });
});

describe('turns', () => {
  const messages = [
    { role: 'system', content: 'Be kind.' },
    { role: 'user', content: 'one' },
    { role: 'user', content: 'two' },
    { role: 'assistant', content: 'three' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
    { role: 'tool', tool_call_id: 'call_w', content: '{"celsius":3}' },
    { role: 'user', content: 'and now?' },
  ];

  it('provider_2: same-role neighbours merged; the tool_result opens the next user turn', async () => {
    const { key } = await h.gw.account();
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'claude-legacy', messages, tools: [WEATHER_TOOL] } });
    expect(r.status).toBe(200);
    const body = lastBody(h.anthropic);
    expect(body.system).toBe('Be kind.');
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'three' }, { type: 'tool_use', id: 'call_w', name: 'get_weather', input: { city: 'Oslo' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_w', content: '{"celsius":3}' }, { type: 'text', text: 'and now?' }] },
    ]);
    // max_tokens is required by this protocol: the default cap is sent.
    expect(body.max_tokens).toBe(4096);
  });

  it('provider_3: roles user/model merged; the function name recovered from the call; an object result kept, the first replayed call carries the signature stand-in', async () => {
    const { key } = await h.gw.account();
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gemini-test', messages, tools: [WEATHER_TOOL] } });
    expect(r.status).toBe(200);
    const body = lastBody(h.gemini);
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be kind.' }] });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'one' }, { text: 'two' }] },
      { role: 'model', parts: [{ text: 'three' }, { functionCall: { name: 'get_weather', args: { city: 'Oslo' } }, thoughtSignature: 'skip_thought_signature_validator' }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { celsius: 3 } } }, { text: 'and now?' }] },
    ]);
    expect(body.generationConfig.maxOutputTokens).toBe(4096);
  });

  it('provider_3: a tool message answering no earlier call is refused (400 invalid_request naming it), refunded', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gemini-test', messages: [...hi, { role: 'tool', tool_call_id: 'call_nowhere', content: 'x' }] } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'invalid_request', param: 'messages[1].tool_call_id' });
    expect(h.gemini.requests).toHaveLength(0);
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance, held: 0 });
  });

  it('provider_2: a tool schema without a root type, or without parameters, is sent as an object schema', async () => {
    const { key } = await h.gw.account();
    const tools = [
      { type: 'function', function: { name: 'untyped', parameters: { properties: { q: { type: 'string' } } } } },
      { type: 'function', function: { name: 'bare', description: 'No arguments' } },
    ];
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'claude-legacy', messages: hi, tools } });
    expect(r.status).toBe(200);
    expect(lastBody(h.anthropic).tools).toEqual([
      { name: 'untyped', input_schema: { type: 'object', properties: { q: { type: 'string' } } } },
      { name: 'bare', description: 'No arguments', input_schema: { type: 'object', properties: {} } },
    ]);
  });

  it('provider_2: tool calls answered by id (the client ids travel as tool_use ids)', async () => {
    const { key } = await h.gw.account();
    h.anthropic.enqueue({ kind: 'tool_calls', calls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] });
    const first = await h.gw.api('/chat/completions', { key, body: { model: 'claude-legacy', messages: hi, tools: [WEATHER_TOOL] } });
    const call = first.json.choices[0].message.tool_calls[0];
    // Anthropic's toolu_ id, renamed: call_ plus the same suffix.
    expect(call.id).toMatch(/^call_01[A-Za-z0-9]{22}$/);
    await h.gw.api('/chat/completions', { key, body: { model: 'claude-legacy', tools: [WEATHER_TOOL], messages: [...hi, first.json.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '' }] } });
    const sent = lastBody(h.anthropic).messages as Wire[];
    expect(sent[1].content[0]).toMatchObject({ type: 'tool_use', id: call.id });
    // An empty result is a tool_result without content.
    expect(sent[2].content).toEqual([{ type: 'tool_result', tool_use_id: call.id }]);
  });
});
