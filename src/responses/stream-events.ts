/**
 * The Responses stream as that API sends it: `event: <type>` and `data: {type, …,
 * sequence_number}` per event, numbered from 0 in order. The run's envelope events
 * (`response.created`, `response.in_progress`, then `response.completed` or
 * `response.incomplete`; on an error after the first byte one `error` event and
 * `response.failed`) come from here; the output items' events from the leg's stream.
 */
import type { Json } from '../chat/chat-request.ts';
import type { SseWriter } from '../http/sse-writer.ts';
import type { GatewayError } from '../shared/errors.ts';
import { responseView, visibleItem, type ResponseIdentity, type ResponseState } from './response-view.ts';

export class ResponseEvents {
  private sequence = 0;

  constructor(private readonly sse: SseWriter, private readonly who: ResponseIdentity) {}

  /** One event; its sequence number is the next one. */
  emit(type: string, fields: Json): void {
    const data = JSON.stringify({ type, ...fields, sequence_number: this.sequence++ });
    this.sse.write(`event: ${type}\ndata: ${data}\n\n`);
  }

  /** A native provider's event, renumbered in this stream. */
  relay(event: Json): void {
    const { type, sequence_number: _dropped, ...fields } = event;
    if (typeof fields.item === 'object' && fields.item !== null) fields.item = visibleItem(fields.item as Json, this.who.request);
    this.emit(String(type), fields);
  }

  start(): void {
    const response = responseView(this.who, { status: 'in_progress', output: [] });
    this.emit('response.created', { response });
    this.emit('response.in_progress', { response });
  }

  /** The final event: completed or incomplete, with the whole response. */
  finish(state: ResponseState): void {
    this.emit(state.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: responseView(this.who, state) });
  }

  /** An error after the first byte: the `error` event, then `response.failed` with what was output. */
  fail(error: GatewayError, output: Json[]): void {
    this.emit('error', { code: error.code, message: error.message, param: error.param ?? null });
    this.emit('response.failed', { response: responseView(this.who, { status: 'failed', output, error: { code: error.code, message: error.message } }) });
  }
}
