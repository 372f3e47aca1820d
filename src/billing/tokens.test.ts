import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { describe, expect, it } from 'vitest';
import { countTextTokens } from './tokens.ts';

describe('input token counts', () => {
  it('a long text counted again (remembered) gives the same count, and texts of one length are never confused', async () => {
    // Same length, different token counts: words against digits.
    const words = 'alpha beta gamma delta '.repeat(200);
    const digits = '7'.repeat(words.length);
    const huge = 'The quick brown fox jumps over the lazy dog. '.repeat(2000);
    expect(countTokens(words)).not.toBe(countTokens(digits));
    const first = [await countTextTokens([words]), await countTextTokens([digits]), await countTextTokens([huge])];
    expect(first.slice(0, 2)).toEqual([countTokens(words), countTokens(digits)]);
    for (let i = 0; i < 3; i++) {
      expect(await countTextTokens([digits, words, huge])).toBe(first[0]! + first[1]! + first[2]!);
      expect(await countTextTokens([huge])).toBe(first[2]);
      expect(await countTextTokens([words.replace('alpha', 'omega')])).toBe(countTokens(words.replace('alpha', 'omega')));
    }
  });
});
