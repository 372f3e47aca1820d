/**
 * A Messages request as the one internal chat request: the hold, content support and the plans
 * read it for every provider, and the chat adapters of provider_1, provider_3 and provider_7 build
 * their requests from it. system → a system message; text/image/document blocks → parts;
 * tool_use → tool calls; tool_result → tool messages (an image inside one follows in a user
 * message); thinking → reasoning content; tools, tool_choice, stop sequences, thinking budget and
 * output_config as their chat counterparts. `cache_control` marks are kept as breakpoints.
 *
 * `origins` names, for each chat message and part, the Messages block it came from, so a refusal
 * of a part (content support, media hold) names the block the client sent.
 */
import type { ChatRequest } from '../chat/chat-request.ts';
import type { CacheControl, ChatMessage, ContentPart, FunctionTool, ResponseFormat, TextBlock, ToolCall, ToolChoice } from '../shared/chat-wire.ts';
import { GatewayError } from '../shared/errors.ts';
import { isObject, type Block, type Json, type MessagesRequest } from './messages-request.ts';

export interface ChatTranslation {
  chat: ChatRequest;
  /** origins[i][j]: the Messages path of chat message i's part j (j = 0 for a message without parts). */
  origins: string[][];
}

function markOf(block: Json): CacheControl | undefined {
  const mark = block.cache_control;
  if (!isObject(mark)) return undefined;
  return mark.ttl === '1h' || mark.ttl === '5m' ? { ttl: mark.ttl } : {};
}

function textOf(blocks: readonly Block[]): string {
  return blocks.filter((b) => b.type === 'text').map((b) => String(b.text)).join('');
}

/** An image or PDF block → the chat part the adapters read (a data URL or an https URL). */
function mediaPart(block: Block, at: string): ContentPart {
  const source = block.source as Json;
  const refuse = (why: string) => new GatewayError('unsupported_content', `${why} (${at}).`, { param: at });
  if (block.type === 'image') {
    if (source.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') {
      return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
    }
    if (source.type === 'url' && typeof source.url === 'string') return { type: 'image_url', image_url: { url: source.url } };
    throw refuse('Images are accepted as base64 or URL sources');
  }
  if (source.type === 'base64' && source.media_type === 'application/pdf' && typeof source.data === 'string') {
    return { type: 'file', file: { file_data: `data:application/pdf;base64,${source.data}` } };
  }
  throw refuse('Documents are accepted as base64 PDF sources');
}

/** A tool result's text (a string, or its text blocks joined), and the images it carries. */
function toolResultContent(block: Block, at: string): { text: string; images: { part: ContentPart; at: string }[] } {
  const content = block.content;
  const prefix = block.is_error === true ? 'Error: ' : '';
  if (content === undefined || typeof content === 'string') return { text: prefix + (content ?? ''), images: [] };
  const inner = content as Block[];
  const images = inner.flatMap((b, k) => (b.type === 'image' || b.type === 'document' ? [{ part: mediaPart(b, `${at}.content[${k}]`), at: `${at}.content[${k}]` }] : []));
  return { text: prefix + textOf(inner), images };
}

export function toChatRequest(request: MessagesRequest): ChatTranslation {
  const messages: ChatMessage[] = [];
  const origins: string[][] = [];
  const push = (message: ChatMessage, from: string[]) => {
    messages.push(message);
    origins.push(from);
  };
  if (request.system !== undefined) push(systemMessage(request.system), request.system.map((_, i) => `system[${i}]`));
  request.messages.forEach((turn, i) => {
    const at = `messages[${i}]`;
    if (turn.role === 'system') push(systemMessage(turn.blocks), [at]);
    else if (turn.role === 'assistant') push(assistantMessage(turn.blocks), [at]);
    else if (turn.text !== undefined) push({ role: 'user', content: turn.text }, [at]);
    else userTurn(turn.blocks, at, push);
  });
  const chat: ChatRequest = { model: request.model, messages, maxTokens: request.maxTokens, stream: request.stream, includeUsage: false, ignored: [] };
  if (request.models !== undefined) chat.models = request.models;
  if (request.temperature !== undefined) chat.temperature = request.temperature;
  if (request.topP !== undefined) chat.top_p = request.topP;
  if (request.stopSequences !== undefined) chat.stop = request.stopSequences;
  if (request.tools !== undefined) {
    chat.tools = request.tools.map((t): FunctionTool => {
      const mark = t.cacheControl === undefined ? undefined : markOf({ cache_control: t.cacheControl });
      return { name: t.name, description: t.description, parameters: t.inputSchema, strict: undefined, ...(mark === undefined ? {} : { cacheControl: mark }) };
    });
    const choice = request.toolChoice;
    if (choice !== undefined) {
      chat.tool_choice = toolChoiceOf(choice);
      if (choice.disable_parallel_tool_use === true) chat.parallel_tool_calls = false;
    }
  }
  const effort = effortOf(request);
  if (effort !== undefined) chat.reasoning_effort = effort;
  const format = formatOf(request.outputConfig);
  if (format !== undefined) chat.response_format = format;
  return { chat, origins };
}

function systemMessage(blocks: readonly Block[]): ChatMessage {
  const texts: TextBlock[] = blocks.filter((b) => b.type === 'text').map((b) => {
    const mark = markOf(b);
    return mark === undefined ? { text: String(b.text) } : { text: String(b.text), cacheControl: mark };
  });
  const content = texts.map((t) => t.text).join('\n\n');
  return texts.some((t) => t.cacheControl !== undefined) ? { role: 'system', content, blocks: texts } : { role: 'system', content };
}

function assistantMessage(blocks: readonly Block[]): ChatMessage {
  const toolCalls: ToolCall[] = blocks
    .filter((b) => b.type === 'tool_use')
    .map((b) => ({ id: String(b.id), name: String(b.name), arguments: JSON.stringify(b.input ?? {}) }));
  const text = textOf(blocks);
  const reasoning = blocks.filter((b) => b.type === 'thinking').map((b) => String(b.thinking)).join('');
  const message: ChatMessage = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text, toolCalls: toolCalls.length > 0 ? toolCalls : undefined };
  if (reasoning !== '') message.reasoningContent = reasoning;
  const mark = [...blocks].reverse().map(markOf).find((m) => m !== undefined);
  if (mark !== undefined) message.cacheControl = mark;
  return message;
}

/** A user turn: its tool results as tool messages first (they answer the turn before), then its other blocks as one user message. */
function userTurn(blocks: readonly Block[], at: string, push: (m: ChatMessage, from: string[]) => void): void {
  const parts: ContentPart[] = [];
  const marks: (CacheControl | undefined)[] = [];
  const from: string[] = [];
  blocks.forEach((block, j) => {
    const where = `${at}.content[${j}]`;
    if (block.type === 'tool_result') {
      const { text, images } = toolResultContent(block, where);
      const mark = markOf(block);
      push({ role: 'tool', content: text, toolCallId: String(block.tool_use_id), ...(mark === undefined ? {} : { cacheControl: mark }) }, [where]);
      for (const image of images) {
        parts.push(image.part);
        marks.push(undefined);
        from.push(image.at);
      }
      return;
    }
    // Thinking blocks belong to assistant turns; a user turn's are not for the model.
    if (block.type !== 'text' && block.type !== 'image' && block.type !== 'document') return;
    parts.push(block.type === 'text' ? { type: 'text', text: String(block.text) } : mediaPart(block, where));
    marks.push(markOf(block));
    from.push(where);
  });
  if (parts.length === 0) return;
  const message: ChatMessage = { role: 'user', content: parts };
  if (marks.some((m) => m !== undefined)) message.cacheControls = marks;
  push(message, from);
}

function toolChoiceOf(choice: Json): ToolChoice {
  switch (choice.type) {
    case 'any':
      return 'required';
    case 'tool':
      return { name: String(choice.name) };
    case 'none':
      return 'none';
    default:
      return 'auto';
  }
}

/** The reasoning effort a thinking budget or output_config.effort stands for (translated providers). */
function effortOf(request: MessagesRequest): string | undefined {
  const effort = request.outputConfig?.effort;
  if (effort === 'low' || effort === 'medium' || effort === 'high') return effort;
  if (effort === 'max') return 'high';
  const thinking = request.thinking;
  if (thinking?.type !== 'enabled' || typeof thinking.budget_tokens !== 'number') return undefined;
  return thinking.budget_tokens <= 4096 ? 'low' : thinking.budget_tokens <= 16_384 ? 'medium' : 'high';
}

function formatOf(config: Json | undefined): ResponseFormat | undefined {
  const format = config?.format;
  if (!isObject(format) || format.type !== 'json_schema' || !isObject(format.schema)) return undefined;
  return { type: 'json_schema', name: 'output', schema: format.schema, strict: true, description: undefined };
}
