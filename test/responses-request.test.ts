/**
 * What real clients send to the Responses route (DECISIONS "Agent formats: the Responses route"),
 * over real HTTP: Codex's custom and namespace tools and its additional_tools item, the developer
 * role, items without type (the Agents SDK), built-in tools dropped and named, the refusals, and
 * provider_1's native passthrough body (store false, the whole context, the held output cap).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { money, startChatHarness, type ChatHarness } from './helpers/chat.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- upstream bodies are inspected freely
type Wire = any;

let h: ChatHarness;
let key: string;
beforeAll(async () => {
  h = await startChatHarness();
  key = (await h.gw.account()).key;
});
afterAll(async () => h.close());
beforeEach(() => {
  for (const e of [h.openai, h.deepseek, h.anthropic, h.gemini]) e.reset();
});

const responses = (body: Record<string, unknown>, k = key) => h.gw.api('/responses', { key: k, body });
const lastBody = (e: { requests: { body: unknown }[] }): Wire => e.requests[e.requests.length - 1]?.body;

/** Codex's tools: a function, a grammar custom tool, a namespace of MCP tools, and a default web search. */
const CODEX_TOOLS = [
  { type: 'function', name: 'exec_command', description: 'Run a command', parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] }, strict: false },
  { type: 'custom', name: 'apply_patch', description: 'Apply a patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch" /.+/s' } },
  { type: 'namespace', name: 'mcp__docs', description: 'Docs server', tools: [{ type: 'function', name: 'search', parameters: { type: 'object', properties: { q: { type: 'string' } } } }] },
  { type: 'web_search', external_web_access: false },
];

describe('what Codex sends, on a translated provider (provider_7)', () => {
  it('custom and namespace tools become functions; web_search is dropped and named; client_metadata and prompt_cache_key are taken quietly', async () => {
    h.deepseek.enqueue({ kind: 'text', text: 'ok' });
    const r = await responses({
      model: 'deepseek-test',
      instructions: 'You are Codex.',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Sandbox: read-only.' }] },
        { type: 'message', role: 'user', id: 'msg_1', status: 'completed', content: [{ type: 'input_text', text: 'List the files' }] },
      ],
      tools: CODEX_TOOLS,
      tool_choice: 'auto',
      parallel_tool_calls: false,
      reasoning: { effort: 'medium', summary: 'auto' },
      text: { verbosity: 'low' },
      include: ['reasoning.encrypted_content'],
      store: false,
      stream: false,
      client_metadata: { 'x-codex-turn': '1' },
      prompt_cache_key: 'thread-1',
    });
    expect(r.status, r.text).toBe(200);
    const ignored = String(r.headers['x-service-ignored-params']).split(',');
    expect(ignored).toContain('tools.web_search');
    expect(ignored).not.toContain('client_metadata');
    expect(ignored).not.toContain('prompt_cache_key');
    const sent = lastBody(h.deepseek);
    expect(sent.tools.map((t: Wire) => t.function.name)).toEqual(['exec_command', 'apply_patch', 'mcp__docs__search']);
    expect(sent.tools[1].function.parameters.properties.input.type).toBe('string');
    expect(sent.tools[1].function.description).toContain('lark grammar');
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'You are Codex.' });
    expect(sent.messages.map((m: Wire) => m.role)).toEqual(['system', 'system', 'user']);
    expect(JSON.stringify(sent)).not.toContain('web_search');
  });

  it("a custom tool's call comes back as a custom_tool_call with its input; a namespaced call names its namespace", async () => {
    h.deepseek.enqueue({ kind: 'tool_calls', calls: [{ name: 'apply_patch', arguments: { input: '*** Begin Patch\n*** End Patch' } }, { name: 'mcp__docs__search', arguments: { q: 'gateway' } }] });
    const r = await responses({ model: 'deepseek-test', input: 'Patch it', tools: CODEX_TOOLS, store: false });
    expect(r.status, r.text).toBe(200);
    const [patch, search] = r.json.output;
    expect(patch).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch' });
    expect(search).toMatchObject({ type: 'function_call', name: 'search', namespace: 'mcp__docs', arguments: '{"q":"gateway"}' });
    // Sent back with their outputs, they reach the provider as its tool calls and results.
    h.deepseek.enqueue({ kind: 'text', text: 'Patched.' });
    const next = await responses({
      model: 'deepseek-test', tools: CODEX_TOOLS, store: false,
      input: ['Patch it', patch, { type: 'custom_tool_call_output', call_id: patch.call_id, output: 'Done!' }, search, { type: 'function_call_output', call_id: search.call_id, output: 'found' }]
        .map((item) => (typeof item === 'string' ? { role: 'user', content: item } : item)),
    });
    expect(next.status, next.text).toBe(200);
    const sent = lastBody(h.deepseek);
    // Each call answered before the next: two assistant turns, each with its call, each followed by its result.
    expect(sent.messages.map((m: Wire) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool']);
    const calls = sent.messages.flatMap((m: Wire) => m.tool_calls ?? []);
    expect(calls.map((c: Wire) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ['apply_patch', { input: '*** Begin Patch\n*** End Patch' }],
      ['mcp__docs__search', { q: 'gateway' }],
    ]);
    expect(sent.messages.filter((m: Wire) => m.role === 'tool').map((m: Wire) => m.content)).toEqual(['Done!', 'found']);
  });

  it('an additional_tools input item declares more tools', async () => {
    h.deepseek.enqueue({ kind: 'text', text: 'ok' });
    const r = await responses({
      model: 'deepseek-test', store: false,
      input: [{ type: 'additional_tools', role: 'developer', tools: [CODEX_TOOLS[0], { type: 'image_generation' }] }, { role: 'user', content: 'Hi' }],
    });
    expect(r.status, r.text).toBe(200);
    expect(lastBody(h.deepseek).tools.map((t: Wire) => t.function.name)).toEqual(['exec_command']);
    expect(String(r.headers['x-service-ignored-params'])).toContain('tools.image_generation');
  });
});

describe('the native row (provider_1)', () => {
  it("the client's body reaches provider_1's /responses with store false, the held output cap, built-ins removed, custom tools as sent", async () => {
    h.openai.enqueue({ kind: 'text', text: 'ok' });
    const r = await responses({ model: 'gpt-test', input: [{ role: 'user', content: 'Hi' }], tools: CODEX_TOOLS, prompt_cache_key: 'thread-1', client_metadata: { a: 'b' } });
    expect(r.status, r.text).toBe(200);
    const sent = lastBody(h.openai);
    expect(h.openai.requests.at(-1)?.path).toBe('/v1/responses');
    expect(sent).toMatchObject({ model: 'gpt-test-2026-01-01', store: false, max_output_tokens: 4096, prompt_cache_key: 'thread-1', client_metadata: { a: 'b' } });
    expect(sent.tools.map((t: Wire) => t.type)).toEqual(['function', 'custom', 'namespace']);
    expect(r.json.store).toBe(true);
    expect(r.json.tools).toHaveLength(4);
  });
});

describe('the native row and additional_tools', () => {
  it('an additional_tools item reaches provider_1 as an item (its built-ins left out), its tools not repeated in tools', async () => {
    h.openai.enqueue({ kind: 'text', text: 'ok' });
    const r = await responses({
      model: 'gpt-test', store: false, tools: [CODEX_TOOLS[0]],
      input: [{ type: 'additional_tools', role: 'developer', tools: [CODEX_TOOLS[1], { type: 'web_search' }] }, { role: 'user', content: 'Hi' }],
    });
    expect(r.status, r.text).toBe(200);
    const sent = lastBody(h.openai);
    expect(sent.tools.map((t: Wire) => t.name)).toEqual(['exec_command']);
    expect(sent.input[0]).toEqual({ type: 'additional_tools', role: 'developer', tools: [CODEX_TOOLS[1]] });
  });
});

describe('a stored conversation on a provider_1 reasoning model', () => {
  it('keeps the reasoning encrypted to continue with; the client sees it only when it asked', async () => {
    h.openai.enqueue({ kind: 'text', text: 'Four.', reasoning: 'Two and two make four.' });
    const first = await responses({ model: 'gpt-reasoner', input: 'What is 2+2?' });
    expect(first.status, first.text).toBe(200);
    expect(lastBody(h.openai).include).toEqual(['reasoning.encrypted_content']);
    const reasoning = first.json.output.find((item: Wire) => item.type === 'reasoning');
    expect(reasoning).toBeDefined();
    expect(reasoning.encrypted_content).toBeUndefined();
    h.openai.enqueue({ kind: 'text', text: 'Eight.' });
    const second = await responses({ model: 'gpt-reasoner', input: 'And doubled?', previous_response_id: first.json.id });
    expect(second.status, second.text).toBe(200);
    const sent = lastBody(h.openai).input as Wire[];
    expect(sent.map((item) => item.type ?? 'message')).toEqual(['message', 'reasoning', 'message', 'message']);
    expect(typeof sent[1].encrypted_content).toBe('string');
    expect(sent[2].id).toBeUndefined();
    // Asked for, it is shown.
    h.openai.enqueue({ kind: 'text', text: 'Four.', reasoning: 'Two and two.' });
    const shown = await responses({ model: 'gpt-reasoner', input: 'What is 2+2?', include: ['reasoning.encrypted_content'], store: false });
    expect(typeof shown.json.output.find((item: Wire) => item.type === 'reasoning').encrypted_content).toBe('string');
  });
});

describe('fallbacks (models) across the door × provider table', () => {
  it('provider_1 native fails → the next model, translated, answers; billed at its prices; model echoes the request', async () => {
    const { key: k, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    h.openai.enqueue({ kind: 'error', status: 500 });
    h.anthropic.enqueue({ kind: 'text', text: 'From the fallback.', usage: { input: 10, output: 4 } });
    const r = await responses({ model: 'gpt-test', models: ['claude-test'], input: 'Hi', store: false }, k);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ model: 'gpt-test', status: 'completed' });
    expect(r.json.output[0].content[0].text).toBe('From the fallback.');
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - (10 * 125 + 4 * 1000), held: 0 });
    const job = await h.gw.gateway.store.jobs.getJob(r.headers['x-service-job-id'] as string);
    expect(job?.model).toBe('claude-test');
  });

  it('streamed: a translated model fails before the first byte → provider_1 native answers the stream', async () => {
    h.gemini.enqueue({ kind: 'error', status: 503 });
    h.openai.enqueue({ kind: 'text', text: 'Native fallback.', chunks: 3 });
    const r = await responses({ model: 'gemini-test', models: ['gpt-test'], input: 'Hi', stream: true, store: false });
    expect(r.status).toBe(200);
    const events = r.text.split('\n\n').filter((e) => e.startsWith('event:')).map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)));
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { model: 'gemini-test', status: 'completed' } });
    expect(events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('')).toBe('Native fallback.');
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  });
});

describe('refusals and the request shapes clients send', () => {
  it('an input item nested deeper than 64 levels → 400 invalid_request naming it, nothing walked further', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 100; i++) deep = { a: deep };
    const r = await responses({ model: 'gpt-test', input: [{ role: 'user', content: 'Hi' }, { type: 'function_call_output', call_id: 'c', output: 'x', extra: deep }] });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'invalid_request', param: 'input[1]' });
  });

  it('items without type are messages by their role (the Agents SDK)', async () => {
    h.anthropic.enqueue({ kind: 'text', text: 'ok' });
    const r = await responses({ model: 'claude-test', input: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }], store: false });
    expect(r.status, r.text).toBe(200);
    expect(JSON.stringify(lastBody(h.anthropic).system)).toContain('Be brief.');
  });

  it("an item_reference (the AI SDK's, to a stored reasoning item) is dropped and named", async () => {
    h.anthropic.enqueue({ kind: 'text', text: 'ok' });
    const r = await responses({ model: 'claude-test', store: false, input: [{ role: 'user', content: 'Hi' }, { type: 'item_reference', id: 'rs_123' }] });
    expect(r.status, r.text).toBe(200);
    expect(r.headers['x-service-ignored-params']).toBe('input.item_reference');
  });

  it('background: true → 400 invalid_request, nothing held', async () => {
    const { key: k, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    const r = await responses({ model: 'gpt-test', input: 'Hi', background: true }, k);
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'invalid_request', param: 'background' });
    expect(await money(h.gw, accountId)).toEqual(before);
  });

  it('a tool_choice that requires a dropped built-in tool → 400 invalid_request', async () => {
    const r = await responses({ model: 'deepseek-test', input: 'Search', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'invalid_request', param: 'tool_choice' });
  });

  it('an unknown field is dropped and named; an unknown previous_response_id → 404 response_not_found', async () => {
    h.gemini.enqueue({ kind: 'text', text: 'ok' });
    const r = await responses({ model: 'gemini-test', input: 'Hi', frobnicate: 1, store: false });
    expect(r.status).toBe(200);
    expect(r.headers['x-service-ignored-params']).toBe('frobnicate');
    const missing = await responses({ model: 'gemini-test', input: 'Hi', previous_response_id: 'resp_nope' });
    expect(missing.status).toBe(404);
    expect(missing.json.error).toMatchObject({ code: 'response_not_found', param: 'previous_response_id' });
  });

  it("the job record's kind is 'responses' (GET /jobs/{id} with the chat key; the dashboard's request log shows it)", async () => {
    h.gemini.enqueue({ kind: 'text', text: 'ok', usage: { input: 3, output: 1 } });
    const r = await responses({ model: 'gemini-test', input: 'Hi', store: false });
    const job = await h.gw.api(`/jobs/${r.headers['x-service-job-id']}`, { key });
    expect(job.status, job.text).toBe(200);
    expect(job.json).toMatchObject({ kind: 'responses', status: 'succeeded', model: 'gemini-test' });
    const log = await h.gw.admin('GET', `/admin/v1/jobs?limit=1`);
    expect(log.json.data[0]).toMatchObject({ id: r.headers['x-service-job-id'], kind: 'responses' });
  });

  it('a response stored with store: false is not kept: retrieve → 404', async () => {
    h.gemini.enqueue({ kind: 'text', text: 'ok' });
    const r = await responses({ model: 'gemini-test', input: 'Hi', store: false });
    const got = await h.gw.api(`/responses/${r.json.id}`, { key });
    expect(got.status).toBe(404);
    expect(got.json.error.code).toBe('response_not_found');
  });

  it("a part the model's provider cannot take is named as the client sent it (input[i].content[j], not the internal message)", async () => {
    const pdf = `data:application/pdf;base64,${Buffer.from('%PDF-1.4').toString('base64')}`;
    const r = await responses({
      model: 'deepseek-test', instructions: 'Read it.',
      input: [{ role: 'developer', content: 'Be brief.' }, { role: 'user', content: [{ type: 'input_text', text: 'Summarise' }, { type: 'input_file', filename: 'a.pdf', file_data: pdf }] }],
    });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'unsupported_content', param: 'input[1].content[1]' });
    expect(r.json.error.message).toContain('input[1].content[1]');
  });

  it('an image file_id part → 400 unsupported_content naming the part', async () => {
    const r = await responses({ model: 'gpt-test', input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] }] });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'unsupported_content', param: 'input[0].content[0]' });
  });
});
