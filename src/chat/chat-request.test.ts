import { describe, expect, it } from 'vitest';
import { GatewayError } from '../shared/errors.ts';
import { parseChatRequest } from './chat-request.ts';

const base = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

function refused(body: unknown): { code: string; param: string | null | undefined } {
  try {
    parseChatRequest(body);
  } catch (error) {
    if (error instanceof GatewayError) return { code: error.code, param: error.param };
    throw error;
  }
  throw new Error('accepted');
}

describe('chat request validation', () => {
  it('each item of the rejected list is 400 invalid_request naming the field', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ n: 2 }, 'n'],
      [{ logprobs: true }, 'logprobs'],
      [{ top_logprobs: 3 }, 'top_logprobs'],
      [{ audio: { voice: 'alloy', format: 'mp3' } }, 'audio'],
      [{ modalities: ['text', 'audio'] }, 'modalities'],
      [{ functions: [{ name: 'f' }] }, 'functions'],
      [{ function_call: 'auto' }, 'function_call'],
      [{ web_search_options: {} }, 'web_search_options'],
      [{ tools: [{ type: 'retrieval' }] }, 'tools[0].type'],
      [{ tools: [{ type: 'function', function: { name: 'a' } }], tool_choice: { type: 'function', function: { name: 'b' } } }, 'tool_choice'],
      [{ messages: [{ role: 'function', name: 'f', content: 'x' }] }, 'messages[0].role'],
      [{ messages: [{ role: 'user', content: 'q' }, { role: 'tool', content: 'r' }] }, 'messages[1].tool_call_id'],
    ];
    for (const [extra, param] of cases) expect(refused({ ...base, ...extra }), param).toEqual({ code: 'invalid_request', param });
  });

  it('types and ranges', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ model: 3 }, 'model'],
      [{ messages: [] }, 'messages'],
      [{ messages: Array.from({ length: 5001 }, () => ({ role: 'user', content: 'x' })) }, 'messages'],
      [{ temperature: 2.1 }, 'temperature'],
      [{ top_p: -0.1 }, 'top_p'],
      [{ frequency_penalty: 3 }, 'frequency_penalty'],
      [{ presence_penalty: '1' }, 'presence_penalty'],
      [{ max_tokens: 0 }, 'max_tokens'],
      [{ max_completion_tokens: 1.5 }, 'max_completion_tokens'],
      [{ stop: Array.from({ length: 17 }, (_, i) => String(i)) }, 'stop'],
      [{ user: 'u'.repeat(513) }, 'user'],
      [{ tools: Array.from({ length: 513 }, (_, i) => ({ type: 'function', function: { name: `f${i}` } })) }, 'tools'],
      [{ stream: 'yes' }, 'stream'],
      [{ response_format: { type: 'xml' } }, 'response_format.type'],
      [{ logit_bias: { abc: 1 } }, 'logit_bias'],
    ];
    for (const [extra, param] of cases) expect(refused({ ...base, ...extra }), param).toEqual({ code: 'invalid_request', param });
  });

  it('null is accepted for every optional field', () => {
    const nulls = Object.fromEntries(
      ['max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'stop', 'seed', 'frequency_penalty', 'presence_penalty', 'logit_bias', 'stream', 'stream_options', 'tools', 'tool_choice', 'parallel_tool_calls', 'response_format', 'user', 'reasoning_effort', 'verbosity', 'n', 'logprobs', 'top_logprobs', 'audio', 'modalities', 'functions', 'function_call', 'web_search_options'].map((k) => [k, null]),
    );
    const request = parseChatRequest({ ...base, ...nulls });
    expect(request).toMatchObject({ model: 'm', stream: false, includeUsage: false, maxTokens: undefined, ignored: [] });
  });

  it('limits at their edges are accepted; empty stop strings are removed', () => {
    const r = parseChatRequest({
      ...base, messages: Array.from({ length: 5000 }, () => ({ role: 'user', content: 'x' })),
      stop: ['', 'END', ...Array.from({ length: 14 }, (_, i) => `s${i}`)], user: 'u'.repeat(512), temperature: 2, top_p: 1, frequency_penalty: -2,
      tools: Array.from({ length: 512 }, (_, i) => ({ type: 'function', function: { name: `f${i}` } })),
    });
    expect(r.stop).toHaveLength(15);
    expect(r.stop?.[0]).toBe('END');
    expect(parseChatRequest({ ...base, stop: '' }).stop).toBeUndefined();
  });

  it('max_completion_tokens wins over max_tokens', () => {
    expect(parseChatRequest({ ...base, max_tokens: 100, max_completion_tokens: 50 }).maxTokens).toBe(50);
    expect(parseChatRequest({ ...base, max_tokens: 100 }).maxTokens).toBe(100);
  });

  it('unknown fields and tool_choice / parallel_tool_calls without tools are reported as ignored', () => {
    const r = parseChatRequest({ ...base, foo: 1, store: true, tool_choice: 'auto', parallel_tool_calls: false });
    expect(r.ignored).toEqual(['foo', 'store', 'tool_choice', 'parallel_tool_calls']);
    expect(r.tool_choice).toBeUndefined();
  });

  it('messages: assistant content null with tool_calls, echoed refusal/annotations, developer role', () => {
    const r = parseChatRequest({
      model: 'm',
      messages: [
        { role: 'developer', content: [{ type: 'text', text: 'Be ' }, { type: 'text', text: 'brief.' }] },
        { role: 'user', content: [{ type: 'text', text: 'weather?' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
        { role: 'assistant', content: null, refusal: null, annotations: [], tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{"c":"P"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '20C' },
      ],
    });
    expect(r.messages[0]).toEqual({ role: 'developer', content: 'Be brief.' });
    expect(r.messages[2]).toEqual({ role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'w', arguments: '{"c":"P"}' }] });
    expect(r.messages[3]).toEqual({ role: 'tool', content: '20C', toolCallId: 'call_1' });
  });
});
