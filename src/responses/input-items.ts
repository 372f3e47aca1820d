/**
 * The Responses format's input items: read into one normal form (every item has its `type`;
 * a string input is one user message), and translated into the chat messages every provider
 * adapter takes. Items are what the client sent, kept as sent for the native provider and for
 * storage; the translation reads them:
 *   message (user / system / developer / assistant) → that chat message, its parts translated;
 *   function_call, custom_tool_call → an assistant turn's tool calls (consecutive ones joined);
 *   function_call_output, custom_tool_call_output → tool results;
 *   reasoning → the reasoning text of the assistant turn that follows (providers that replay it);
 *   additional_tools → more tools (tools.ts).
 * Items of built-in tools (web search calls and the like) and item references are dropped and named.
 */
import { bounded, invalid, isObject, present, type Json } from '../chat/chat-request.ts';
import type { ChatMessage, ContentPart, ToolCall } from '../shared/chat-wire.ts';
import { GatewayError } from '../shared/errors.ts';
import { addTools, customArguments, flatName, type ToolTable } from './tools.ts';

export const MAX_INPUT_ITEMS = 10_000;

/** An input item as the client sent it, with its `type` made explicit. */
export type InputItem = Json & { type: string };

const ROLES = new Set(['user', 'system', 'developer', 'assistant']);

/** `input` (a string or a list of items) in normal form: the list, each item typed. */
export function normalInput(input: unknown): InputItem[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  if (!Array.isArray(input)) throw invalid('input', "'input' is required: a string or a list of items.");
  if (input.length > MAX_INPUT_ITEMS) throw invalid('input', `'input' may hold at most ${MAX_INPUT_ITEMS} items.`);
  return input.map((item, i) => {
    if (!isObject(item)) throw invalid(`input[${i}]`, 'Each input item must be an object.');
    bounded(item, `input[${i}]`);
    // The Agents SDK's messages carry no type: a role makes them messages.
    if (item.type === undefined && typeof item.role === 'string') return { ...item, type: 'message' };
    if (typeof item.type !== 'string') throw invalid(`input[${i}].type`, "Each input item needs a 'type' (or a 'role' for a message).");
    return item as InputItem;
  });
}

/** The internal messages and, for each, the item it came from as the client names it (`input[3]`). */
export interface TranslatedMessages {
  messages: ChatMessage[];
  origins: string[];
}

/**
 * Chat messages from the context items (the first `stored` of them from a stored conversation, named
 * `previous_response_id`; the others `input[i]`); `tools` gains the tools items declare; dropped item
 * types are named in `ignored`.
 */
export function chatMessages(items: readonly InputItem[], stored: number, tools: ToolTable, ignored: string[]): TranslatedMessages {
  const out: ChatMessage[] = [];
  const origins: string[] = [];
  let where = 'input';
  const push = (message: ChatMessage) => {
    out.push(message);
    origins.push(where);
  };
  let reasoning: string | undefined;
  /** The assistant turn being built, while its items follow one another. */
  let turn: Extract<ChatMessage, { role: 'assistant' }> | undefined;
  const assistant = (): Extract<ChatMessage, { role: 'assistant' }> => {
    if (turn === undefined) {
      turn = { role: 'assistant', content: null, toolCalls: undefined };
      if (reasoning !== undefined) turn.reasoningContent = reasoning;
      reasoning = undefined;
      push(turn);
    }
    return turn;
  };
  const call = (c: ToolCall) => {
    const t = assistant();
    t.toolCalls = [...(t.toolCalls ?? []), c];
  };
  items.forEach((item, i) => {
    where = i < stored ? 'previous_response_id' : `input[${i - stored}]`;
    switch (item.type) {
      case 'message': {
        const role = item.role;
        if (typeof role !== 'string' || !ROLES.has(role)) throw invalid(`${where}.role`, "A message's role is 'user', 'system', 'developer' or 'assistant'.");
        if (role === 'assistant') {
          const text = textOf(item.content, where, true);
          // An assistant message after tool calls starts a new turn (the calls were answered meanwhile).
          if (turn !== undefined && turn.toolCalls !== undefined) turn = undefined;
          const t = assistant();
          t.content = (t.content ?? '') + text;
          return;
        }
        turn = undefined;
        if (role === 'user') push({ role: 'user', content: userContent(item.content, where) });
        else push({ role: role as 'system' | 'developer', content: textOf(item.content, where, false) });
        return;
      }
      case 'function_call': {
        if (typeof item.call_id !== 'string' || typeof item.name !== 'string') throw invalid(where, "A function_call needs 'call_id' and 'name'.");
        const args = typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments ?? {});
        bounded(parsed(args), `${where}.arguments`);
        call({ id: item.call_id, name: flatName(item.name, typeof item.namespace === 'string' ? item.namespace : undefined), arguments: args });
        return;
      }
      case 'custom_tool_call': {
        if (typeof item.call_id !== 'string' || typeof item.name !== 'string' || typeof item.input !== 'string') throw invalid(where, "A custom_tool_call needs 'call_id', 'name' and 'input'.");
        call({ id: item.call_id, name: flatName(item.name, typeof item.namespace === 'string' ? item.namespace : undefined), arguments: customArguments(item.input) });
        return;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        if (typeof item.call_id !== 'string') throw invalid(`${where}.call_id`, `A ${item.type} needs 'call_id'.`);
        turn = undefined;
        push({ role: 'tool', toolCallId: item.call_id, content: outputText(item.output, where) });
        return;
      }
      case 'reasoning': {
        const summary = Array.isArray(item.summary) ? item.summary : [];
        const text = summary.map((s) => (isObject(s) && typeof s.text === 'string' ? s.text : '')).join('\n\n');
        if (text !== '') reasoning = reasoning === undefined ? text : `${reasoning}\n\n${text}`;
        return;
      }
      case 'additional_tools':
        addTools(tools, item.tools, `${where}.tools`, ignored);
        return;
      default:
        // Items of built-in tools the gateway never runs (web_search_call, …): nothing a provider can take. An
        // item_reference (the AI SDK's, to a previous response's reasoning item) names an item no provider is sent.
        ignored.push(`input.${item.type.replace(/[^a-zA-Z0-9_.-]/g, '_').slice(0, 64)}`);
    }
  });
  return { messages: out, origins };
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The text of a system, developer or assistant message: a string, or its text parts joined. */
function textOf(content: unknown, where: string, assistant: boolean): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalid(`${where}.content`, 'content must be a string or a list of parts.');
  return content.map((part, j) => {
    if (isObject(part)) {
      if ((part.type === 'input_text' || part.type === 'output_text' || part.type === 'text') && typeof part.text === 'string') return part.text;
      if (assistant && part.type === 'refusal' && typeof part.refusal === 'string') return part.refusal;
    }
    throw invalid(`${where}.content[${j}]`, 'Only text parts are accepted in this message.');
  }).join('');
}

/** A user message's parts as chat content parts (images as image_url, files as inline files). */
function userContent(content: unknown, where: string): string | ContentPart[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content) || content.length === 0) throw invalid(`${where}.content`, 'content must be a string or a non-empty list of parts.');
  return content.map((part, j): ContentPart => {
    const param = `${where}.content[${j}]`;
    if (!isObject(part) || typeof part.type !== 'string') throw invalid(param, "Each content part needs a 'type'.");
    bounded(part, param);
    const refuse = (why: string) => new GatewayError('unsupported_content', `${why} (${param}).`, { param });
    switch (part.type) {
      case 'input_text':
      case 'text':
        if (typeof part.text !== 'string') throw invalid(`${param}.text`, 'A text part needs a string text.');
        return { type: 'text', text: part.text };
      case 'input_image':
        if (typeof part.image_url !== 'string') throw refuse('Images are accepted as an image_url (https or a data URL), not by file_id');
        return { type: 'image_url', image_url: { url: part.image_url, ...(typeof part.detail === 'string' ? { detail: part.detail } : {}) } };
      case 'input_file':
        if (typeof part.file_data !== 'string') throw refuse('Files are accepted only inline (file_data), not by file_id or file_url');
        return { type: 'file', file: { file_data: fileDataUrl(part.file_data), ...(typeof part.filename === 'string' ? { filename: part.filename } : {}) } };
      default:
        throw refuse(`Content parts of type '${part.type}' are not supported`);
    }
  });
}

/** `file_data` as a data URL (the SDKs send one; bare base64 is taken as a PDF). */
function fileDataUrl(data: string): string {
  return data.startsWith('data:') ? data : `data:application/pdf;base64,${data}`;
}

/** A tool's output: a string, or its text parts joined. */
function outputText(output: unknown, where: string): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) {
    return output.map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join('');
  }
  if (!present(output)) return '';
  throw invalid(`${where}.output`, 'A tool output is a string or a list of parts.');
}
