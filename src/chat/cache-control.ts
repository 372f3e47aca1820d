/**
 * `cache_control` on the chat route (DECISIONS.md "Prompt caching, billed exactly"): the shape
 * the `openai` SDK's and LiteLLM's users send for Anthropic models, on a content part, a message
 * or a tool. Parsed here into typed marks and taken off the parts, so it reaches only a provider
 * that caches where asked (provider_2's request builder) and no other provider ever sees it.
 */
import type { CacheControl, CacheTtl, ChatMessage, ContentPart, FunctionTool, TextBlock } from '../shared/chat-wire.ts';
import { GatewayError } from '../shared/errors.ts';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `{type: "ephemeral", ttl?: "5m" | "1h"}`, or nothing when absent or null; anything else is 400 invalid_request. */
export function parseCacheControl(value: unknown, at: string): CacheControl | undefined {
  if (value === undefined || value === null) return undefined;
  const param = `${at}.cache_control`;
  const refuse = () => new GatewayError('invalid_request', `'${param}' must be {"type": "ephemeral"} with an optional "ttl" of "5m" or "1h".`, { param });
  if (!isObject(value) || value.type !== 'ephemeral') throw refuse();
  for (const key of Object.keys(value)) if (key !== 'type' && key !== 'ttl') throw refuse();
  if (value.ttl === undefined) return {};
  if (value.ttl !== '5m' && value.ttl !== '1h') throw refuse();
  return { ttl: value.ttl };
}

/** A text-only message's parts as blocks with their marks (a message-level mark on the last), or undefined when none is marked. */
export function markedTextBlocks(texts: readonly { text: string; mark: CacheControl | undefined }[], messageMark: CacheControl | undefined): TextBlock[] | undefined {
  const blocks: TextBlock[] = texts.map(({ text, mark }) => (mark === undefined ? { text } : { text, cacheControl: mark }));
  const last = blocks[blocks.length - 1];
  if (messageMark !== undefined && last !== undefined && last.cacheControl === undefined) last.cacheControl = messageMark;
  return blocks.some((b) => b.cacheControl !== undefined) ? blocks : undefined;
}

/** A user message's parts without `cache_control`, and the marks that were on them (undefined when none). */
export function unmarkedParts(parts: readonly ContentPart[], at: string, messageMark: CacheControl | undefined): { parts: ContentPart[]; marks: (CacheControl | undefined)[] | undefined } {
  const marks = parts.map((part, j) => parseCacheControl(part.cache_control, `${at}.content[${j}]`));
  const stripped = parts.map((part) => {
    if (!('cache_control' in part)) return part;
    const { cache_control: _mark, ...rest } = part;
    return rest as ContentPart;
  });
  if (messageMark !== undefined && marks.length > 0 && marks[marks.length - 1] === undefined) marks[marks.length - 1] = messageMark;
  return { parts: stripped, marks: marks.some((m) => m !== undefined) ? marks : undefined };
}

function marksOf(m: ChatMessage): (CacheControl | undefined)[] {
  switch (m.role) {
    case 'system':
    case 'developer':
      return (m.blocks ?? []).map((b) => b.cacheControl);
    case 'user':
      return m.cacheControls ?? [];
    default:
      return [m.cacheControl];
  }
}

/** The cache-write lifetimes a request asks for (a mark without `ttl` is the default 5 minutes). */
export function requestedCacheTtls(messages: readonly ChatMessage[], tools: readonly FunctionTool[] | undefined): CacheTtl[] {
  const ttls = new Set<CacheTtl>();
  const add = (mark: CacheControl | undefined) => {
    if (mark !== undefined) ttls.add(mark.ttl ?? '5m');
  };
  for (const tool of tools ?? []) add(tool.cacheControl);
  for (const m of messages) for (const mark of marksOf(m)) add(mark);
  return [...ttls];
}
