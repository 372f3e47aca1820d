/**
 * The internal answer rendered in the Messages format, for the models that are translated: a
 * completion as a message (thinking, text and tool_use blocks, the stop reason), the adapters'
 * stream events as that API's events (message_start, content_block_start / _delta / _stop,
 * message_delta, message_stop), and the one Usage value as that API's usage object.
 */
import type { Completion, FinishReason, StreamEvent, Usage } from '../shared/chat-wire.ts';
import { argumentsObject } from '../providers/translation.ts';
import { cacheWriteTokens } from '../shared/usage.ts';
import type { MessageIdentity } from '../providers/anthropic/passthrough.ts';

type Json = Record<string, unknown>;

const STOP: Record<FinishReason, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
};

/** That API's usage: `input_tokens` without the cached tokens, which are reported apart. */
export function messagesUsage(usage: Usage): Json {
  return {
    input_tokens: usage.promptTokens - (usage.cacheReadTokens ?? 0) - cacheWriteTokens(usage),
    output_tokens: usage.completionTokens,
    cache_creation_input_tokens: cacheWriteTokens(usage),
    cache_read_input_tokens: usage.cacheReadTokens ?? 0,
  };
}

export function renderCompletion(who: MessageIdentity, completion: Completion, usage: Usage): Json {
  const content: Json[] = [];
  if (completion.reasoning !== undefined) content.push({ type: 'thinking', thinking: completion.reasoning, signature: '' });
  const text = completion.content ?? completion.refusal ?? '';
  if (text !== '') content.push({ type: 'text', text });
  for (const call of completion.toolCalls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: argumentsObject(call.arguments) });
  return {
    id: who.id,
    type: 'message',
    role: 'assistant',
    model: who.model,
    content,
    stop_reason: STOP[completion.finishReason],
    stop_sequence: null,
    usage: messagesUsage(usage),
  };
}

function event(name: string, data: Json): string {
  return `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
}

type OpenBlock = { kind: 'text' | 'thinking' } | { kind: 'tool'; ordinal: number };

/**
 * The adapters' stream events → that API's events, one content block at a time: a block of
 * another kind (or another tool call) closes the one before it.
 */
export class EventRenderer {
  private index = -1;
  private open: OpenBlock | undefined;
  /** Tool ordinal → its block index (argument fragments go to their own call's block). */
  private readonly tools = new Map<number, number>();
  private finish: FinishReason | undefined;
  usage: Usage | undefined;
  outputChars = 0;
  /** Of outputChars: those sent when the last usage came. */
  charsCounted = 0;

  constructor(private readonly who: MessageIdentity) {}

  /** The stream's first event: the message, empty, with the input the hold estimated. */
  start(inputTokens: number): string {
    const message = { id: this.who.id, type: 'message', role: 'assistant', model: this.who.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: inputTokens, output_tokens: 0 } };
    return event('message_start', { message }) + event('ping', {});
  }

  /** True once the provider said why it stopped. */
  get finished(): boolean {
    return this.finish !== undefined;
  }

  push(events: readonly StreamEvent[]): string {
    let out = '';
    for (const e of events) {
      switch (e.type) {
        case 'content':
        case 'refusal':
          this.outputChars += e.text.length;
          out += this.ensure({ kind: 'text' }, { type: 'text', text: '' });
          out += event('content_block_delta', { index: this.index, delta: { type: 'text_delta', text: e.text } });
          break;
        case 'reasoning':
          this.outputChars += e.text.length;
          out += this.ensure({ kind: 'thinking' }, { type: 'thinking', thinking: '', signature: '' });
          out += event('content_block_delta', { index: this.index, delta: { type: 'thinking_delta', thinking: e.text } });
          break;
        case 'tool_call':
          this.outputChars += e.name.length;
          out += this.close();
          this.index += 1;
          this.open = { kind: 'tool', ordinal: e.index };
          this.tools.set(e.index, this.index);
          out += event('content_block_start', { index: this.index, content_block: { type: 'tool_use', id: e.id, name: e.name, input: {} } });
          break;
        case 'tool_arguments': {
          this.outputChars += e.fragment.length;
          const index = this.tools.get(e.index);
          if (index !== undefined) out += event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: e.fragment } });
          break;
        }
        case 'finish':
          this.finish ??= e.reason;
          break;
        case 'usage':
          this.usage = e.usage;
          this.charsCounted = this.outputChars;
          break;
        case 'error':
          throw e.error;
      }
    }
    return out;
  }

  /** The stream's last events, with the usage billed. */
  end(billed: Usage): string {
    const usage = messagesUsage(billed);
    return this.close() + event('message_delta', { delta: { stop_reason: STOP[this.finish ?? 'stop'], stop_sequence: null }, usage }) + event('message_stop', {});
  }

  private ensure(want: { kind: 'text' | 'thinking' }, block: Json): string {
    if (this.open?.kind === want.kind) return '';
    const out = this.close();
    this.index += 1;
    this.open = want;
    return out + event('content_block_start', { index: this.index, content_block: block });
  }

  private close(): string {
    if (this.open === undefined) return '';
    this.open = undefined;
    return event('content_block_stop', { index: this.index });
  }
}
