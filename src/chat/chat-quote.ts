/**
 * Chat money: the hold before a run (input estimated with a real tokenizer, plus the
 * capped output tokens, plus images and PDF pages at their most) and the exact cost
 * after it, rounded up once.
 */
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { ceilDiv, SCALE } from '../catalog/decimal.ts';
import type { TokenPrices } from '../catalog/pricing.ts';
import type { ChatRequest } from './chat-request.ts';
import type { ChatMessage } from '../shared/chat-wire.ts';
import type { Usage } from '../shared/chat-wire.ts';

/*
 * The estimate uses cl100k_base: on ordinary text it counts at least as many tokens as
 * o200k_base (provider_1's current models) and is a safer upper bound for the other
 * providers' tokenizers, and it needs 28 MB less memory.
 */

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

/** Texts longer than this are counted in pieces, yielding to other requests between pieces. */
const PIECE_CHARS = 16_384;

/**
 * Input tokens by a real tokenizer (cl100k_base), with the format's framing. A huge prompt
 * is counted piece by piece (cut at whitespace, so the sum never undercounts by more
 * than a token per piece, which the framing allowance covers) so that other requests
 * are not stalled while it is counted.
 */
export async function estimateInputTokens(request: ChatRequest): Promise<number> {
  let tokens = PRIMER;
  for (const text of inputText(request)) {
    tokens += PER_MESSAGE;
    if (text.length <= PIECE_CHARS) {
      tokens += countTokens(text);
      continue;
    }
    for (let start = 0; start < text.length; ) {
      let end = Math.min(text.length, start + PIECE_CHARS);
      if (end < text.length) {
        const space = text.lastIndexOf(' ', end);
        if (space > start) end = space;
      }
      tokens += countTokens(text.slice(start, end)) + 1;
      start = end;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  return tokens;
}

/** About 4 characters per token (the spec's estimate where a provider reports no usage). */
export function charsToTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

export function costOf(prices: TokenPrices, usage: Usage): number {
  const scaled = BigInt(usage.promptTokens) * prices.inputMicroPerTokenScaled + BigInt(usage.completionTokens) * prices.outputMicroPerTokenScaled;
  return Number(ceilDiv(scaled, SCALE));
}

export function holdOf(prices: TokenPrices, inputTokens: number, outputTokens: number): number {
  return costOf(prices, { promptTokens: inputTokens, completionTokens: outputTokens });
}
