/**
 * provider_2 spoken natively by a door that already speaks its protocol (the Messages route):
 * the client's body is forwarded with only the model id replaced and the dropped fields removed,
 * so thinking blocks with their signatures, `cache_control` marks and tool ids arrive as sent; the
 * answer and the event stream come back as provider_2 sent them, but for the message's `id` and
 * `model`, with the usage read for billing (usage.ts, the same reading as the chat adapter's).
 */
import type { Usage } from '../../shared/chat-wire.ts';
import { GatewayError } from '../../shared/errors.ts';
import type { UpstreamRequest } from '../adapter.ts';
import { SseLines } from '../sse-lines.ts';
import { ANTHROPIC_VERSION, streamError } from './adapter.ts';
import { anthropicUsage } from './usage.ts';

type Json = Record<string, unknown>;

/** What the answer's message is called for the client: our id and the model it asked for. */
export interface MessageIdentity {
  id: string;
  model: string;
}

/** The client's own protocol headers that travel on: its API version and beta list. */
export interface PassthroughHeaders {
  version: string | undefined;
  beta: string | undefined;
}

/** The body as sent (key order kept), the model id replaced, `drop`ped fields left out. */
export function passthroughRequest(body: Json, providerModelId: string, drop: ReadonlySet<string>, headers: PassthroughHeaders, apiKey: string): UpstreamRequest {
  const forwarded: Json = {};
  for (const [name, value] of Object.entries(body)) {
    if (drop.has(name)) continue;
    forwarded[name] = name === 'model' ? providerModelId : value;
  }
  const sent: Record<string, string> = { 'x-api-key': apiKey, 'anthropic-version': headers.version ?? ANTHROPIC_VERSION, 'content-type': 'application/json' };
  if (headers.beta !== undefined) sent['anthropic-beta'] = headers.beta;
  return { path: '/v1/messages', headers: sent, body: JSON.stringify(forwarded) };
}

/** The answer as provider_2 gave it, renamed; its usage read for billing; its output length for an estimate. */
export function passthroughAnswer(raw: unknown, who: MessageIdentity): { message: Json; usage: Usage | undefined; outputChars: number } {
  if (typeof raw !== 'object' || raw === null || !Array.isArray((raw as Json).content)) {
    throw new GatewayError('upstream_error', 'The model provider answered without content.');
  }
  const body = raw as Json;
  const outputChars = (body.content as unknown[]).reduce<number>((n, block) => n + JSON.stringify(block).length, 0);
  return { message: { ...body, id: who.id, model: who.model }, usage: anthropicUsage(body.usage), outputChars };
}

/**
 * provider_2's event stream relayed event by event, as it comes: `message_start` renamed, every
 * other event's data as sent. An `error` event throws (the door answers it in its own words).
 */
export class PassthroughRelay {
  private readonly sse = new SseLines();
  private counted: Json = {};
  /** Text, thinking and tool input received (an estimate's basis where no usage came). */
  outputChars = 0;
  /** Of outputChars: those received when the last counts came (the output after them is estimated). */
  charsCounted = 0;
  /** provider_2's own end (`message_stop`) was seen. */
  complete = false;

  constructor(private readonly who: MessageIdentity) {}

  get usage(): Usage | undefined {
    return anthropicUsage(this.counted);
  }

  /** Raw upstream text → the events to send on. */
  push(text: string): string {
    return this.relay(this.sse.push(text));
  }

  /** The upstream body ended: what is left of its last event. */
  end(): string {
    return this.relay(this.sse.end());
  }

  private relay(events: { event: string | undefined; data: string }[]): string {
    let out = '';
    for (const { event: name, data } of events) {
      let event: Json;
      try {
        event = JSON.parse(data) as Json;
      } catch {
        continue;
      }
      const type = name ?? String(event.type);
      let sent = data;
      switch (type) {
        case 'message_start': {
          const message = event.message as Json | undefined;
          if (typeof message?.usage === 'object' && message.usage !== null) {
            this.counted = { ...(message.usage as Json) };
            this.charsCounted = this.outputChars;
          }
          sent = JSON.stringify({ ...event, message: { ...message, id: this.who.id, model: this.who.model } });
          break;
        }
        case 'content_block_delta': {
          const delta = event.delta as Json | undefined;
          for (const field of ['text', 'thinking', 'partial_json']) if (typeof delta?.[field] === 'string') this.outputChars += (delta[field] as string).length;
          break;
        }
        case 'message_delta':
          // Counts here are cumulative and supersede message_start's.
          if (typeof event.usage === 'object' && event.usage !== null) {
            this.counted = { ...this.counted, ...(event.usage as Json) };
            this.charsCounted = this.outputChars;
          }
          break;
        case 'message_stop':
          this.complete = true;
          break;
        case 'error':
          throw streamError(event);
      }
      out += `event: ${type}\ndata: ${sent}\n\n`;
    }
    return out;
  }
}
