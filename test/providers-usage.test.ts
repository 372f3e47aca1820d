/**
 * Each chat adapter reads its provider's cache and reasoning counts into the one Usage value,
 * in answers and in streams (where each protocol puts them: OpenAI-style in the usage chunk,
 * Anthropic in message_start then message_delta, Gemini cumulatively on every chunk).
 */
import { describe, expect, it } from 'vitest';
import type { ProviderAdapter } from '../src/providers/adapter.ts';
import { AnthropicAdapter } from '../src/providers/anthropic/adapter.ts';
import { GeminiAdapter } from '../src/providers/gemini/adapter.ts';
import { OpenAiCompatibleAdapter } from '../src/providers/openai-compatible/adapter.ts';
import type { StreamEvent } from '../src/shared/chat-wire.ts';

const openai = new OpenAiCompatibleAdapter({ replayReasoning: false, abortedFinishReasons: [], thinkingSwitch: false });
const deepseek = new OpenAiCompatibleAdapter({ replayReasoning: true, abortedFinishReasons: ['insufficient_system_resource'], thinkingSwitch: true });

function streamUsage(adapter: ProviderAdapter, sse: string) {
  const decoder = adapter.streamDecoder();
  const events: StreamEvent[] = [...decoder.push(sse), ...decoder.end().events];
  const usages = events.filter((e) => e.type === 'usage');
  return usages[usages.length - 1]?.usage;
}

const data = (v: unknown) => `data: ${JSON.stringify(v)}\n\n`;
const event = (name: string, v: unknown) => `event: ${name}\n${data(v)}`;

describe('usage with cache and reasoning counts', () => {
  it('provider_1: cached_tokens, cache_write_tokens (GPT-5.6+) and reasoning_tokens are parts of prompt and completion', () => {
    const usage = { prompt_tokens: 5000, completion_tokens: 300, prompt_tokens_details: { cached_tokens: 4096, cache_write_tokens: 800, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 120 } };
    const expected = { promptTokens: 5000, completionTokens: 300, cacheReadTokens: 4096, cacheWrite5mTokens: 800, reasoningTokens: 120 };
    const answer = openai.parseResponse({ choices: [{ message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage });
    expect(answer.usage).toEqual(expected);
    const stream = data({ choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }] }) + data({ choices: [], usage }) + 'data: [DONE]\n\n';
    expect(streamUsage(openai, stream)).toEqual(expected);
    // Zero details are no parts: a run without cache fields keeps its old shape.
    const plain = openai.parseResponse({ choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 9, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } } });
    expect(plain.usage).toEqual({ promptTokens: 9, completionTokens: 2 });
  });

  it('provider_7: prompt_cache_hit_tokens is the cache read, on the finish chunk of a stream', () => {
    const usage = { prompt_tokens: 2000, completion_tokens: 50, prompt_cache_hit_tokens: 1920, prompt_cache_miss_tokens: 80, completion_tokens_details: { reasoning_tokens: 30 } };
    const expected = { promptTokens: 2000, completionTokens: 50, cacheReadTokens: 1920, reasoningTokens: 30 };
    expect(deepseek.parseResponse({ choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }], usage }).usage).toEqual(expected);
    expect(streamUsage(deepseek, data({ choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }], usage }) + 'data: [DONE]\n\n')).toEqual(expected);
  });

  it('provider_2: message_start carries the cache counts, message_delta the final output', () => {
    const start = { input_tokens: 20, cache_read_input_tokens: 4000, cache_creation_input_tokens: 700, cache_creation: { ephemeral_5m_input_tokens: 500, ephemeral_1h_input_tokens: 200 }, output_tokens: 1 };
    const stream =
      event('message_start', { type: 'message_start', message: { id: 'msg_1', content: [], usage: start } }) +
      event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
      event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ok' } }) +
      event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 42 } }) +
      event('message_stop', { type: 'message_stop' });
    expect(streamUsage(new AnthropicAdapter(), stream)).toEqual({ promptTokens: 4720, completionTokens: 42, cacheReadTokens: 4000, cacheWrite5mTokens: 500, cacheWrite1hTokens: 200 });
  });

  it('provider_3: the last chunk counts (cumulative), cachedContentTokenCount and thoughtsTokenCount included', () => {
    const chunk = (text: string, usageMetadata: unknown, finishReason?: string) => data({ candidates: [{ content: { role: 'model', parts: [{ text }] }, ...(finishReason === undefined ? {} : { finishReason }) }], usageMetadata });
    const stream =
      chunk('o', { promptTokenCount: 3000, cachedContentTokenCount: 2048, totalTokenCount: 3000 }) +
      chunk('k', { promptTokenCount: 3000, cachedContentTokenCount: 2048, candidatesTokenCount: 4, thoughtsTokenCount: 90, totalTokenCount: 3094 }, 'STOP');
    expect(streamUsage(new GeminiAdapter(), stream)).toEqual({ promptTokens: 3000, completionTokens: 94, cacheReadTokens: 2048, reasoningTokens: 90 });
  });
});
