/**
 * provider_2's prompt cache, emulated: `cache_control` breakpoints are checked as Anthropic
 * checks them (shape, at most 4, 1-hour entries before 5-minute ones), and the built-in answer
 * bills them as Anthropic does. Blocks are read in Anthropic's order (tools, system, messages);
 * the prefix up to a breakpoint is written on first sight (5-minute or 1-hour write by its
 * `ttl`) and read while it lives (each read refreshes it). Tokens are ~4 characters, as the rest
 * of the emulator counts them. One memory per emulator instance, cleared by `reset()`.
 */
import { createHash } from 'node:crypto';
import type { ScenarioUsage } from './types.ts';
import { isRecord, tokensFor } from './util.ts';

type Ttl = '5m' | '1h';
const LIFETIME_MS: Record<Ttl, number> = { '5m': 5 * 60_000, '1h': 60 * 60_000 };
const MAX_BREAKPOINTS = 4;

interface Block {
  /** The block as sent, without its cache_control (what the cache key is made of). */
  key: string;
  chars: number;
  ttl: Ttl | undefined;
}

function withoutMark(block: Record<string, unknown>): Record<string, unknown> {
  const { cache_control: _mark, ...rest } = block;
  return rest;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((b) => (isRecord(b) && typeof b.text === 'string' ? b.text : '')).join(' ');
}

function charsOf(block: Record<string, unknown>, tool: boolean): number {
  if (tool) return JSON.stringify(withoutMark(block)).length;
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text.length : 0;
    case 'tool_result':
      return textOf(block.content).length;
    case 'tool_use':
      return JSON.stringify(block.input ?? {}).length;
    case 'thinking':
      return typeof block.thinking === 'string' ? block.thinking.length : 0;
    default:
      return 0;
  }
}

function block(raw: unknown, tool: boolean): Block {
  if (typeof raw === 'string') return { key: JSON.stringify(raw), chars: raw.length, ttl: undefined };
  const b = isRecord(raw) ? raw : {};
  const mark = b.cache_control;
  return { key: JSON.stringify(withoutMark(b)), chars: charsOf(b, tool), ttl: isRecord(mark) ? (mark.ttl === '1h' ? '1h' : '5m') : undefined };
}

/** Every block of a (valid) request in Anthropic's cache order; a top-level cache_control marks the last one. */
function blocksOf(body: Record<string, unknown>): Block[] {
  const out: Block[] = [];
  if (Array.isArray(body.tools)) for (const t of body.tools) out.push(block(t, true));
  if (typeof body.system === 'string') out.push(block(body.system, false));
  else if (Array.isArray(body.system)) for (const b of body.system) out.push(block(b, false));
  for (const m of body.messages as unknown[]) {
    const content = isRecord(m) ? m.content : undefined;
    if (typeof content === 'string') out.push(block(content, false));
    else if (Array.isArray(content)) for (const b of content) out.push(block(b, false));
  }
  const top = body.cache_control;
  const last = out[out.length - 1];
  if (isRecord(top) && last !== undefined && last.ttl === undefined) last.ttl = top.ttl === '1h' ? '1h' : '5m';
  return out;
}

/** Every cache_control a request carries, with where it sits (for error messages). */
function marksOf(body: Record<string, unknown>): { at: string; mark: unknown }[] {
  const marks: { at: string; mark: unknown }[] = [];
  const scan = (list: unknown, at: string) => {
    if (!Array.isArray(list)) return;
    list.forEach((b, i) => {
      if (isRecord(b) && b.cache_control !== undefined && b.cache_control !== null) marks.push({ at: `${at}.${i}`, mark: b.cache_control });
    });
  };
  scan(body.tools, 'tools');
  scan(body.system, 'system');
  if (Array.isArray(body.messages)) body.messages.forEach((m, i) => isRecord(m) && scan(m.content, `messages.${i}.content`));
  if (body.cache_control !== undefined && body.cache_control !== null) marks.push({ at: 'cache_control', mark: body.cache_control });
  return marks;
}

/** Anthropic's refusal of a request's cache_control, or undefined when they are all acceptable. */
export function cacheControlError(body: Record<string, unknown>): string | undefined {
  const marks = marksOf(body);
  let sawShort = false;
  for (const { at, mark } of marks) {
    const where = at === 'cache_control' ? at : `${at}.cache_control`;
    if (!isRecord(mark)) return `${where}: Input should be a valid dictionary or object to extract fields from`;
    if (mark.type !== 'ephemeral') return `${where}: Input tag '${String(mark.type)}' found using 'type' does not match any of the expected tags: 'ephemeral'`;
    for (const key of Object.keys(mark)) if (key !== 'type' && key !== 'ttl') return `${where}.ephemeral.${key}: Extra inputs are not permitted`;
    if (mark.ttl !== undefined && mark.ttl !== '5m' && mark.ttl !== '1h') return `${where}.ephemeral.ttl: Input should be '5m' or '1h'`;
    if (mark.ttl === '1h' && sawShort) {
      return "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`, `system`, `messages`.";
    }
    if (mark.ttl !== '1h') sawShort = true;
  }
  const count = marks.filter((m) => m.at !== 'cache_control').length;
  if (count > MAX_BREAKPOINTS) return `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${count}.`;
  return undefined;
}

export class PromptCache {
  /** Prefix hash → when it expires and how long a read extends it. */
  private readonly entries = new Map<string, { expires: number; ttl: Ttl }>();

  constructor(private readonly now: () => number = Date.now) {}

  reset(): void {
    this.entries.clear();
  }

  /**
   * The built-in answer's usage for a request with breakpoints (undefined without any): input
   * split into the longest live prefix read, the newly written segments by their ttl, and the
   * rest; the entries are written or refreshed.
   */
  usage(model: string, body: Record<string, unknown>, computed: ScenarioUsage): ScenarioUsage | undefined {
    const blocks = blocksOf(body);
    if (!blocks.some((b) => b.ttl !== undefined)) return undefined;
    const now = this.now();
    const hash = createHash('sha256').update(model);
    let chars = 0;
    let read = 0;
    const writes: { key: string; tokens: number; ttl: Ttl }[] = [];
    for (const b of blocks) {
      hash.update('\u0000' + b.key);
      chars += b.chars;
      if (b.ttl === undefined) continue;
      const key = hash.copy().digest('hex');
      const tokens = tokensFor(chars);
      const entry = this.entries.get(key);
      if (entry !== undefined && entry.expires > now) {
        // A later live prefix covers every write before it.
        read = tokens;
        writes.length = 0;
        entry.expires = now + LIFETIME_MS[entry.ttl];
      } else {
        writes.push({ key, tokens, ttl: b.ttl });
      }
    }
    const total = Math.max(1, tokensFor(chars));
    const split = { '5m': 0, '1h': 0 };
    let covered = read;
    for (const w of writes) {
      split[w.ttl] += w.tokens - covered;
      covered = w.tokens;
      this.entries.set(w.key, { expires: now + LIFETIME_MS[w.ttl], ttl: w.ttl });
    }
    return { ...computed, input: total - covered, cacheRead: read, cacheWrite: split['5m'], cacheWrite1h: split['1h'] };
  }
}
