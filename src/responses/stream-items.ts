/**
 * A translated provider's stream (the chat adapters' normalized events) as Responses output
 * item events: one item open at a time, in the order the provider produced them (reasoning,
 * the message, each tool call), each opened with `response.output_item.added`, filled with its
 * deltas and closed with its `.done` events and `response.output_item.done`.
 */
import type { Json } from '../chat/chat-request.ts';
import type { StreamEvent } from '../shared/chat-wire.ts';
import type { ResponseEvents } from './stream-events.ts';
import { callItem, itemId, messageItem, reasoningItem } from './response-view.ts';
import { customInput, type ToolTable } from './tools.ts';

interface OpenItem {
  kind: 'reasoning' | 'message' | 'call';
  id: string;
  index: number;
  text: string;
  refusal: string | null;
  /** Calls: the chat call (its id, flat name, arguments so far) and its place among the answer's calls. */
  call?: { id: string; name: string; arguments: string; ordinal: number };
}

export class StreamItems {
  /** Output items closed so far, in order. */
  readonly output: Json[] = [];
  private open: OpenItem | undefined;
  /** Characters generated (the estimate where no usage comes). */
  outputChars = 0;

  constructor(private readonly events: ResponseEvents, private readonly tools: ToolTable) {}

  /** Text of the message (after fence stripping where the door does it). */
  text(delta: string): void {
    if (delta === '') return;
    this.outputChars += delta.length;
    const item = this.ensure('message');
    if (item.text === '' && item.refusal === null) this.events.emit('response.content_part.added', { item_id: item.id, output_index: item.index, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
    item.text += delta;
    this.events.emit('response.output_text.delta', { item_id: item.id, output_index: item.index, content_index: 0, delta, logprobs: [] });
  }

  /** One normalized event of the provider's stream (content goes through `text`). */
  take(event: Exclude<StreamEvent, { type: 'content' | 'finish' | 'usage' | 'error' }>): void {
    switch (event.type) {
      case 'reasoning': {
        this.outputChars += event.text.length;
        const item = this.ensure('reasoning');
        item.text += event.text;
        this.events.emit('response.reasoning_summary_text.delta', { item_id: item.id, output_index: item.index, summary_index: 0, delta: event.text });
        return;
      }
      case 'refusal': {
        this.outputChars += event.text.length;
        const item = this.ensure('message');
        item.refusal = (item.refusal ?? '') + event.text;
        return;
      }
      case 'tool_call': {
        this.outputChars += event.name.length;
        this.close();
        const call = { id: event.id, name: event.name, arguments: '', ordinal: event.index };
        const item: OpenItem = { kind: 'call', id: itemId(this.tools.byFlatName.get(event.name)?.kind === 'custom' ? 'ctc' : 'fc'), index: this.output.length, text: '', refusal: null, call };
        this.open = item;
        const shown: Json = { ...callItem(call, this.tools, item.id), status: 'in_progress' };
        if (shown.type === 'custom_tool_call') shown.input = '';
        this.events.emit('response.output_item.added', { output_index: item.index, item: shown });
        return;
      }
      case 'tool_arguments': {
        this.outputChars += event.fragment.length;
        const item = this.open;
        // Providers stream one call at a time; a fragment for a call already closed is left out.
        if (item?.call === undefined || item.call.ordinal !== event.index) return;
        item.call.arguments += event.fragment;
        if (this.tools.byFlatName.get(item.call.name)?.kind !== 'custom') {
          this.events.emit('response.function_call_arguments.delta', { item_id: item.id, output_index: item.index, delta: event.fragment });
        }
        return;
      }
    }
  }

  /** Closes the open item; the output is complete. */
  end(): Json[] {
    this.close();
    return this.output;
  }

  private ensure(kind: 'reasoning' | 'message'): OpenItem {
    if (this.open?.kind === kind) return this.open;
    this.close();
    const item: OpenItem = { kind, id: itemId(kind === 'message' ? 'msg' : 'rs'), index: this.output.length, text: '', refusal: null };
    this.open = item;
    if (kind === 'message') {
      this.events.emit('response.output_item.added', { output_index: item.index, item: { id: item.id, type: 'message', role: 'assistant', status: 'in_progress', content: [] } });
    } else {
      this.events.emit('response.output_item.added', { output_index: item.index, item: { id: item.id, type: 'reasoning', summary: [] } });
      this.events.emit('response.reasoning_summary_part.added', { item_id: item.id, output_index: item.index, summary_index: 0, part: { type: 'summary_text', text: '' } });
    }
    return item;
  }

  private close(): void {
    const item = this.open;
    if (item === undefined) return;
    this.open = undefined;
    const at = { item_id: item.id, output_index: item.index };
    let done: Json;
    switch (item.kind) {
      case 'reasoning':
        this.events.emit('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: item.text });
        this.events.emit('response.reasoning_summary_part.done', { ...at, summary_index: 0, part: { type: 'summary_text', text: item.text } });
        done = reasoningItem(item.text, item.id);
        break;
      case 'message': {
        if (item.text !== '' || item.refusal === null) {
          const part = { type: 'output_text', text: item.text, annotations: [], logprobs: [] };
          if (item.text === '') this.events.emit('response.content_part.added', { ...at, content_index: 0, part: { ...part } });
          this.events.emit('response.output_text.done', { ...at, content_index: 0, text: item.text, logprobs: [] });
          this.events.emit('response.content_part.done', { ...at, content_index: 0, part });
        }
        if (item.refusal !== null) {
          const content_index = item.text === '' ? 0 : 1;
          this.events.emit('response.content_part.added', { ...at, content_index, part: { type: 'refusal', refusal: '' } });
          this.events.emit('response.refusal.delta', { ...at, content_index, delta: item.refusal });
          this.events.emit('response.refusal.done', { ...at, content_index, refusal: item.refusal });
          this.events.emit('response.content_part.done', { ...at, content_index, part: { type: 'refusal', refusal: item.refusal } });
        }
        done = messageItem(item.text, item.refusal, item.id);
        break;
      }
      case 'call': {
        const call = item.call as NonNullable<OpenItem['call']>;
        done = callItem(call, this.tools, item.id);
        if (done.type === 'custom_tool_call') {
          const input = customInput(call.arguments);
          this.events.emit('response.custom_tool_call_input.delta', { ...at, delta: input });
          this.events.emit('response.custom_tool_call_input.done', { ...at, input });
        } else {
          this.events.emit('response.function_call_arguments.done', { ...at, name: done.name, arguments: call.arguments });
        }
        break;
      }
    }
    this.output.push(done);
    this.events.emit('response.output_item.done', { output_index: item.index, item: done });
  }
}
