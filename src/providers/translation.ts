/**
 * Pieces shared by the adapters whose wire format is not chat-completions (provider_2
 * Anthropic Messages, provider_3 Gemini): the system text, the instructions that stand
 * in for what a model does not enforce natively, data URLs, call ids and arguments.
 */
import { randomBytes } from 'node:crypto';
import type { ChatMessage, ToolCall } from '../shared/chat-wire.ts';
import { GatewayError } from '../shared/errors.ts';
import type { ProviderCall } from './adapter.ts';
import { JSON_OBJECT_INSTRUCTION, schemaInstruction } from './structured-output.ts';

/** system and developer messages, in order, joined by a blank line ('' when there are none). */
export function systemText(messages: readonly ChatMessage[]): string {
  return messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => m.content as string)
    .filter((text) => text !== '')
    .join('\n\n');
}

/** True for `required` and a named function. */
export function isForced(choice: ProviderCall['tool_choice']): boolean {
  return choice === 'required' || typeof choice === 'object';
}

/** Whether a forced tool_choice travels as an instruction (the model's routing fact). */
export function forcedByInstruction(call: ProviderCall): boolean {
  return call.tools !== undefined && isForced(call.tool_choice) && call.routing.forced_tool_choice === 'instruction';
}

export function forcedToolInstruction(choice: ProviderCall['tool_choice']): string {
  if (typeof choice === 'object') {
    return `In this answer you must call the tool "${choice.name}" (and no other tool). Do not answer in text instead of calling it.`;
  }
  return 'In this answer you must call at least one of the provided tools. Do not answer in text instead of calling a tool.';
}

/**
 * Instructions appended to the system text: the schema or JSON-object request where the
 * model does not enforce it natively, and a forced tool_choice on models that take it as
 * an instruction. `nativeJsonObject`: the protocol has a JSON-object mode of its own.
 */
export function instructions(call: ProviderCall, nativeJsonObject: boolean): string[] {
  const out: string[] = [];
  const format = call.response_format;
  if (format?.type === 'json_object' && !nativeJsonObject) out.push(JSON_OBJECT_INSTRUCTION);
  if (format?.type === 'json_schema' && call.routing.json_schema !== 'native') out.push(schemaInstruction(format));
  if (forcedByInstruction(call)) out.push(forcedToolInstruction(call.tool_choice));
  return out;
}

export interface DataUrl {
  mimeType: string;
  data: string;
}

/** `data:<mime>;base64,<data>` → its parts (undefined for anything else). `image/jpg` is normalised to `image/jpeg`. */
export function parseDataUrl(url: string): DataUrl | undefined {
  const match = /^data:([a-zA-Z0-9.+/-]+);base64,/.exec(url);
  if (match === null) return undefined;
  const mimeType = (match[1] as string).toLowerCase();
  return { mimeType: mimeType === 'image/jpg' ? 'image/jpeg' : mimeType, data: url.slice(match[0].length) };
}

/** The URL of an `image_url` part (a string or `{url, detail}`). */
export function imageUrlOf(part: { [field: string]: unknown }): string | undefined {
  const raw = part.image_url;
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'object' && raw !== null && typeof (raw as { url?: unknown }).url === 'string') return (raw as { url: string }).url;
  return undefined;
}

/** The data URL of an inline `file` part. */
export function fileDataOf(part: { [field: string]: unknown }): string | undefined {
  const file = part.file;
  if (typeof file === 'object' && file !== null && typeof (file as { file_data?: unknown }).file_data === 'string') return (file as { file_data: string }).file_data;
  return undefined;
}

/** Tool-call arguments as an object, as both protocols need them ({} when the text is not a JSON object). */
export function argumentsObject(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A fresh call id for providers that return none: `call_` + 24 URL-safe characters. */
export function mintCallId(): string {
  return `call_${randomBytes(18).toString('base64url')}`;
}

/** The tool call an assistant turn made under this id, searching earlier turns from the latest. */
export function findToolCall(messages: readonly ChatMessage[], before: number, id: string): ToolCall | undefined {
  for (let i = before - 1; i >= 0; i--) {
    const m = messages[i] as ChatMessage;
    if (m.role !== 'assistant' || m.toolCalls === undefined) continue;
    const hit = m.toolCalls.find((c) => c.id === id);
    if (hit !== undefined) return hit;
  }
  return undefined;
}

/** A tool message whose id matches no earlier assistant tool call (OpenAI refuses these too). */
export function unknownToolCall(index: number, id: string): GatewayError {
  return new GatewayError('invalid_request', `messages[${index}].tool_call_id '${id}' does not answer a tool call of an earlier assistant message.`, {
    param: `messages[${index}].tool_call_id`,
  });
}

/** The message of an upstream error body, wherever the provider keeps it. */
export function errorMessageOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const error = (body as { error?: unknown }).error;
  if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') return (error as { message: string }).message;
  return undefined;
}
