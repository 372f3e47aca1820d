/**
 * Chat money: the hold before a run (input estimated with a real tokenizer, plus the
 * capped output tokens, plus images and PDF pages at their most) and the exact cost
 * after it, rounded up once.
 */
import { countTextTokens, tokenCost } from '../billing/tokens.ts';
import type { TokenPrices } from '../catalog/pricing.ts';
import type { ChatRequest } from './chat-request.ts';
import type { ChatMessage } from '../shared/chat-wire.ts';
import type { Usage } from '../shared/chat-wire.ts';

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

/** About 4 characters per token (the spec's estimate where a provider reports no usage). */
export function charsToTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

export function costOf(prices: TokenPrices, usage: Usage): number {
  return tokenCost(prices, usage.promptTokens, usage.completionTokens);
}

export function holdOf(prices: TokenPrices, inputTokens: number, outputTokens: number): number {
  return costOf(prices, { promptTokens: inputTokens, completionTokens: outputTokens });
}
