import { describe, expect, it } from 'vitest';
import { anthropicUsage } from './usage.ts';

describe("provider_2's usage reader", () => {
  it('adds cache reads and writes to the input, the writes split by lifetime', () => {
    const raw = {
      input_tokens: 12,
      cache_read_input_tokens: 3000,
      cache_creation_input_tokens: 900,
      cache_creation: { ephemeral_5m_input_tokens: 600, ephemeral_1h_input_tokens: 300 },
      output_tokens: 40,
    };
    expect(anthropicUsage(raw)).toEqual({ promptTokens: 3912, completionTokens: 40, cacheReadTokens: 3000, cacheWrite5mTokens: 600, cacheWrite1hTokens: 300 });
  });

  it('a write without the lifetime split is a 5-minute write; zeros and nulls are no parts at all', () => {
    expect(anthropicUsage({ input_tokens: 5, cache_creation_input_tokens: 70, output_tokens: 1 })).toEqual({ promptTokens: 75, completionTokens: 1, cacheWrite5mTokens: 70 });
    expect(anthropicUsage({ input_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: null, cache_creation: null, output_tokens: 1 })).toEqual({ promptTokens: 5, completionTokens: 1 });
    // A split larger than the total it splits: the split counts (never fewer input tokens than written).
    expect(anthropicUsage({ input_tokens: 1, cache_creation_input_tokens: 10, cache_creation: { ephemeral_5m_input_tokens: 8, ephemeral_1h_input_tokens: 7 }, output_tokens: 0 }))
      .toEqual({ promptTokens: 16, completionTokens: 0, cacheWrite5mTokens: 8, cacheWrite1hTokens: 7 });
  });

  it('no usage without input and output counts', () => {
    expect(anthropicUsage({ output_tokens: 3 })).toBeUndefined();
    expect(anthropicUsage(null)).toBeUndefined();
  });
});
