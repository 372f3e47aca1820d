/**
 * Token money shared by every token-priced route: input counted with a real tokenizer
 * before the hold, and the exact cost of a usage, rounded up once.
 *
 * cl100k_base: provider_1's embedding models use it, and on ordinary text it counts at
 * least as many tokens as o200k_base (provider_1's current chat models), a safer upper
 * bound for the other providers' tokenizers too; it needs 28 MB less memory.
 */
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { ceilDiv, SCALE } from '../catalog/decimal.ts';
import type { TokenPrices } from '../catalog/pricing.ts';

/** Text is counted in pieces of about this many characters, yielding to other requests between pieces. */
const PIECE_CHARS = 16_384;

const yieldToOthers = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Counts of long texts, remembered: a conversation resends its whole history every turn and
 * many clients send the same long system prompt with every request, so most long texts have
 * been counted before. The count of a text never changes, so a remembered one is exact.
 * Bounded by characters kept (least recently used out first); short texts cost less to count
 * than to remember.
 */
class RememberedCounts {
  private readonly counts = new Map<string, number>();
  private chars = 0;

  constructor(private readonly fromChars: number, private readonly budgetChars: number) {}

  get(text: string): number | undefined {
    if (text.length < this.fromChars) return undefined;
    const count = this.counts.get(text);
    if (count !== undefined) {
      // Most recently used last.
      this.counts.delete(text);
      this.counts.set(text, count);
    }
    return count;
  }

  set(text: string, count: number): void {
    if (text.length < this.fromChars || text.length > this.budgetChars / 4 || this.counts.has(text)) return;
    this.counts.set(text, count);
    this.chars += text.length;
    for (const oldest of this.counts.keys()) {
      if (this.chars <= this.budgetChars) break;
      this.counts.delete(oldest);
      this.chars -= oldest.length;
    }
  }
}

const remembered = new RememberedCounts(1_024, 4_000_000);

/**
 * Σ tokens of the texts. A long text is cut at whitespace into pieces (one token added per
 * piece, so the sum never undercounts), and the count yields after every piece's worth of
 * characters, so a huge input never stalls other requests.
 */
export async function countTextTokens(texts: Iterable<string>): Promise<number> {
  let tokens = 0;
  let sinceYield = 0;
  for (const text of texts) {
    const known = remembered.get(text);
    if (known !== undefined) {
      tokens += known;
      continue;
    }
    if (text.length <= PIECE_CHARS) {
      const count = countTokens(text);
      remembered.set(text, count);
      tokens += count;
      sinceYield += text.length;
      if (sinceYield >= PIECE_CHARS) {
        sinceYield = 0;
        await yieldToOthers();
      }
      continue;
    }
    let count = 0;
    for (let start = 0; start < text.length; ) {
      let end = Math.min(text.length, start + PIECE_CHARS);
      if (end < text.length) {
        const space = text.lastIndexOf(' ', end);
        if (space > start) end = space;
      }
      count += countTokens(text.slice(start, end)) + 1;
      start = end;
      await yieldToOthers();
    }
    remembered.set(text, count);
    tokens += count;
  }
  return tokens;
}

/** A run's tokens by the price each is billed at; `input` is the input neither read from nor written to a cache. */
export interface PricedTokens {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  cacheWrite1h?: number;
}

/** Exact cost in micro-credits of a run's tokens, each part at its own price, summed exactly and rounded up once. */
export function tokenCost(prices: TokenPrices, tokens: PricedTokens): number {
  const scaled =
    BigInt(tokens.input) * prices.inputMicroPerTokenScaled +
    BigInt(tokens.cacheRead ?? 0) * prices.cacheReadMicroPerTokenScaled +
    BigInt(tokens.cacheWrite ?? 0) * prices.cacheWriteMicroPerTokenScaled +
    BigInt(tokens.cacheWrite1h ?? 0) * prices.cacheWrite1hMicroPerTokenScaled +
    BigInt(tokens.output) * prices.outputMicroPerTokenScaled;
  return Number(ceilDiv(scaled, SCALE));
}
