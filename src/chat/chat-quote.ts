/**
 * Chat money: the hold before a run (input estimated with a real tokenizer, plus the
 * capped output tokens, plus images and PDF pages at their most, at the dearest price the
 * input may be billed at) and the exact cost after it, rounded up once.
 */
import { countTextTokens } from '../billing/tokens.ts';
import { charsToTokens, costOf } from '../billing/token-settlement.ts';
import type { TokenPrices } from '../catalog/pricing.ts';
import type { ChatRequest } from './chat-request.ts';
import type { CacheTtl, ChatMessage } from '../shared/chat-wire.ts';

export { charsToTokens, costOf };

/** Per-message framing tokens in the chat format, and the reply primer. */
const PER_MESSAGE = 4;
const PRIMER = 3;

/** Text of a request that the provider bills as input. */
export function inputText(request: ChatRequest): string[] {
  const texts: string[] = request.messages.map(messageText);
  if (request.tools !== undefined) texts.push(JSON.stringify(request.tools));
  if (request.response_format?.type === 'json_schema') texts.push(JSON.stringify(request.response_format.schema));
  return texts;
}

function messageText(m: ChatMessage): string {
  switch (m.role) {
    case 'user':
      return typeof m.content === 'string' ? m.content : m.content.map((p) => (p.type === 'text' ? String(p.text) : '')).join('\n');
    case 'assistant':
      return (m.content ?? '') + (m.toolCalls?.map((c) => c.name + c.arguments).join('') ?? '');
    default:
      return m.content;
  }
}

/** Input tokens by a real tokenizer (cl100k_base, billing/tokens.ts), with the format's framing. */
export async function estimateInputTokens(request: ChatRequest): Promise<number> {
  const texts = inputText(request);
  return PRIMER + texts.length * PER_MESSAGE + (await countTextTokens(texts));
}

/**
 * The most a run can cost: its input at the dearest price any input token may be billed at
 * (plain input, or a cache write the run may make: `writes`), and the capped output.
 */
export function holdOf(prices: TokenPrices, inputTokens: number, outputTokens: number, writes: readonly CacheTtl[] = []): number {
  let most = costOf(prices, { promptTokens: inputTokens, completionTokens: outputTokens });
  for (const ttl of writes) {
    const written = ttl === '1h' ? { cacheWrite1hTokens: inputTokens } : { cacheWrite5mTokens: inputTokens };
    most = Math.max(most, costOf(prices, { promptTokens: inputTokens, completionTokens: outputTokens, ...written }));
  }
  return most;
}
