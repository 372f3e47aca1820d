/**
 * Passthrough fidelity on the Messages route (DECISIONS "Agent formats: the Messages route"): a
 * provider_2 model receives the client's body byte for byte but for the model id, so thinking
 * blocks with their signatures, `cache_control` on system, tools and blocks, tool ids and what
 * Claude Code sends besides (adaptive thinking, output_config, context_management, deferred
 * tools, a JSON user_id) arrive untouched; the stream comes back as provider_2 sent it, renamed.
 */
import Anthropic from '@anthropic-ai/sdk';
import { request as undiciRequest } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from './helpers/chat.ts';

let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness();
});
afterAll(async () => h.close());
beforeEach(() => h.anthropic.reset());

const SIGNATURE = 'EqQBCkYIBxgCKkBq0Wv1tdpW5Ve7QXn+n8cN3qFJ0mV1w6yPpK2Rk1Ue1Jx8zZ8rS0Qm0bT4h3y0l9lqYh1S2yYk0HcR2pD4EgxJr0Yq8wXg==';
const TOOL_ID = 'toolu_01A09q90qw90lq917835lq9';

/** A Claude Code 2.1 turn, as its own JSON text (key order, unicode and all). */
function claudeCodeBody(model: string) {
  return {
    model,
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'List the files — then read README.md ✓' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should call the tool first.', signature: SIGNATURE },
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', id: TOOL_ID, name: 'Bash', input: { command: 'ls', description: 'List files' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: TOOL_ID, content: 'README.md\nsrc', is_error: false, cache_control: { type: 'ephemeral' } },
          { type: 'text', text: 'Go on.', cache_control: { type: 'ephemeral', ttl: '5m' } },
        ],
      },
    ],
    system: [
      { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude." },
      { type: 'text', text: 'Long instructions. '.repeat(20), cache_control: { type: 'ephemeral', ttl: '1h' } },
    ],
    tools: [
      { name: 'Bash', description: 'Runs a command', input_schema: { type: 'object', properties: { command: { type: 'string' }, description: { type: 'string' } }, required: ['command'], additionalProperties: false, $schema: 'http://json-schema.org/draft-07/schema#' } },
      { name: 'Read', description: 'Reads a file', input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] }, defer_loading: true, cache_control: { type: 'ephemeral', ttl: '1h' } },
    ],
    metadata: { user_id: JSON.stringify({ device_id: 'dev', account_uuid: '', session_id: 'sess' }) },
    max_tokens: 32_000,
    thinking: { type: 'adaptive', display: 'summarized' },
    output_config: { effort: 'high' },
    context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
    stream: true,
  };
}

describe('provider_2 passthrough fidelity', () => {
  it('the body reaches provider_2 byte for byte but for the model id', async () => {
    const { key } = await h.gw.account();
    const text = JSON.stringify(claudeCodeBody('claude-test'));
    h.anthropic.enqueue({ kind: 'text', text: 'README.md describes the project.', reasoning: 'Reading it.' });
    const r = await undiciRequest(`${h.gw.url}/api/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'claude-code-20250219,context-management-2025-06-27' },
      body: text,
    });
    const stream = await r.body.text();
    expect(r.statusCode, stream).toBe(200);
    const sent = h.anthropic.requests[0];
    expect(sent?.rawBody).toBe(text.replace('"model":"claude-test"', '"model":"claude-sonnet-5-5-test"'));
    // The signature, tool id and marks are among those bytes; the header list travels on too.
    expect(sent?.rawBody).toContain(`"signature":"${SIGNATURE}"`);
    expect(sent?.rawBody).toContain(`"tool_use_id":"${TOOL_ID}"`);
    expect(sent?.headers['anthropic-beta']).toBe('claude-code-20250219,context-management-2025-06-27');
    // The stream: provider_2's own events (thinking with its signature_delta), renamed.
    const events = stream.split('\n\n').filter((e) => e.startsWith('event: ')).map((e) => e.slice('event: '.length, e.indexOf('\n')));
    expect(events[0]).toBe('message_start');
    expect(events).toContain('ping');
    expect(events[events.length - 1]).toBe('message_stop');
    expect(stream).toContain('"type":"signature_delta"');
    const start = JSON.parse(stream.split('\n')[1]?.slice('data: '.length) ?? '{}') as { message: { id: string; model: string } };
    expect(start.message.model).toBe('claude-test');
    expect(start.message.id).toBe(`msg_${String(r.headers['x-service-job-id'])}`);
  });

  it('the SDK reads the relayed stream: thinking with its signature, then the text', async () => {
    const { key } = await h.gw.account();
    h.anthropic.enqueue({ kind: 'text', text: 'Done.', reasoning: 'Think first.', chunks: 3 });
    const client = new Anthropic({ apiKey: key, baseURL: `${h.gw.url}/api`, maxRetries: 0 });
    const final = await client.messages.stream({ model: 'claude-test', max_tokens: 2_000, thinking: { type: 'adaptive' }, messages: [{ role: 'user', content: 'Go' }] }).finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'thinking', thinking: 'Think first.' });
    expect(final.content[0]?.type === 'thinking' && final.content[0].signature.length).toBeGreaterThan(10);
    expect(final.content[1]).toMatchObject({ type: 'text', text: 'Done.' });
    expect(final.model).toBe('claude-test');
  });
});
