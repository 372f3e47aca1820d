/**
 * Chat-completions request → Anthropic Messages request body (providers.md §2).
 * system/developer → `system`; same-role neighbours merged; assistant tool_calls →
 * tool_use blocks; tool messages → tool_result blocks leading the next user turn;
 * tool_choice, parallel_tool_calls, structured output and thinking per the model's
 * routing facts; the client's cache_control breakpoints on the matching system, message and
 * tool blocks.
 */
import type { CacheControl, ChatMessage, ContentPart, ResponseFormat } from '../../shared/chat-wire.ts';
import type { ProviderCall } from '../adapter.ts';
import { argumentsObject, fileDataOf, forcedByInstruction, imageUrlOf, instructions, isForced, parseDataUrl, systemText } from '../translation.ts';

type Json = Record<string, unknown>;
type Block = Json;

interface Turn {
  role: 'user' | 'assistant';
  content: Block[];
}

export function anthropicBody(call: ProviderCall): Json {
  const body: Json = { model: call.providerModelId, max_tokens: call.maxTokens };
  const system = systemField(call);
  if (system !== undefined) body.system = system;
  body.messages = turns(call.messages);
  if (call.stop !== undefined) body.stop_sequences = call.stop;
  if (call.temperature !== undefined) body.temperature = call.temperature;
  if (call.top_p !== undefined) body.top_p = call.top_p;
  if (call.stream) body.stream = true;
  if (call.tools !== undefined) {
    body.tools = call.tools.map((t) => ({
      name: t.name,
      ...(t.description === undefined ? {} : { description: t.description }),
      // The root of an input schema must say it is an object (OpenAI takes it left out).
      input_schema: t.parameters === undefined ? { type: 'object', properties: {} } : t.parameters.type === undefined ? { type: 'object', ...t.parameters } : t.parameters,
      ...(t.strict === true ? { strict: true } : {}),
      ...cacheControlOf(t.cacheControl),
    }));
    const choice = toolChoice(call);
    if (choice !== undefined) body.tool_choice = choice;
  }
  const format = outputFormat(call.response_format, call.routing.json_schema === 'native');
  if (format !== undefined) body.output_config = { format };
  if (thinkingOn(call)) body.thinking = { type: 'adaptive' };
  return body;
}

/** A breakpoint as Anthropic takes it (`ttl` only when the client gave one), as fields to spread into a block. */
function cacheControlOf(mark: CacheControl | undefined): { cache_control?: Json } {
  return mark === undefined ? {} : { cache_control: { type: 'ephemeral', ...(mark.ttl === undefined ? {} : { ttl: mark.ttl }) } };
}

/** Adds `mark` to the last block (a breakpoint after the whole message or part), unless it has one. */
function markLast(blocks: Block[], mark: CacheControl | undefined): void {
  const last = blocks[blocks.length - 1];
  if (mark !== undefined && last !== undefined && last.cache_control === undefined) Object.assign(last, cacheControlOf(mark));
}

/**
 * The system prompt: one string, or, where the client marked a system part, text blocks with
 * their breakpoints and the gateway's instructions after them (they vary by request; the
 * marked prefix must not).
 */
function systemField(call: ProviderCall): string | Block[] | undefined {
  const extra = instructions(call, false);
  const system = call.messages.filter((m): m is Extract<ChatMessage, { role: 'system' | 'developer' }> => m.role === 'system' || m.role === 'developer');
  if (!system.some((m) => m.blocks !== undefined)) {
    const text = [systemText(call.messages), ...extra].filter((s) => s !== '').join('\n\n');
    return text === '' ? undefined : text;
  }
  const blocks: Block[] = [];
  for (const m of system) {
    for (const b of m.blocks ?? [{ text: m.content }]) {
      // Anthropic refuses empty text blocks: an empty part's breakpoint goes to the block before it.
      if (b.text === '') markLast(blocks, b.cacheControl);
      else blocks.push({ type: 'text', text: b.text, ...cacheControlOf(b.cacheControl) });
    }
  }
  for (const text of extra) blocks.push({ type: 'text', text });
  return blocks;
}

function toolChoice(call: ProviderCall): Json | undefined {
  const choice = call.tool_choice;
  const single = call.parallel_tool_calls === false ? { disable_parallel_tool_use: true } : {};
  if (choice === 'none') return { type: 'none' };
  if (choice === undefined || choice === 'auto' || forcedByInstruction(call)) {
    return choice === undefined && call.parallel_tool_calls !== false ? undefined : { type: 'auto', ...single };
  }
  if (choice === 'required') return { type: 'any', ...single };
  return { type: 'tool', name: choice.name, ...single };
}

/**
 * Reasoning models think (adaptive thinking), except where Anthropic refuses thinking:
 * with a forced tool_choice sent natively, and while a tool loop is open (the last
 * assistant turn called tools): its thinking blocks would have to be echoed with their
 * signatures, which chat-completions clients never send back.
 */
function thinkingOn(call: ProviderCall): boolean {
  if (!call.routing.reasoning) return false;
  if (call.tools !== undefined && isForced(call.tool_choice) && !forcedByInstruction(call)) return false;
  const lastAssistant = [...call.messages].reverse().find((m) => m.role === 'assistant');
  return lastAssistant === undefined || lastAssistant.role !== 'assistant' || lastAssistant.toolCalls === undefined || lastAssistant.toolCalls.length === 0;
}

function outputFormat(format: ResponseFormat | undefined, native: boolean): Json | undefined {
  if (format === undefined || format.type !== 'json_schema' || !native) return undefined;
  return { type: 'json_schema', schema: closedObjects(format.schema) };
}

/**
 * Anthropic's structured outputs need every object schema closed
 * (`additionalProperties: false`); schemas that leave it out get it added, as
 * Anthropic's own SDK does. An explicit value is kept.
 */
export function closedObjects(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closedObjects);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema as Json)) {
    // Maps of name → schema: recurse into each member, the map itself is not a schema.
    if ((key === 'properties' || key === '$defs' || key === 'definitions') && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      out[key] = Object.fromEntries(Object.entries(value as Json).map(([name, sub]) => [name, closedObjects(sub)]));
    } else if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples' || key === 'required') {
      out[key] = value;
    } else {
      out[key] = closedObjects(value);
    }
  }
  const isObject = out.type === 'object' || (Array.isArray(out.type) && out.type.includes('object')) || out.properties !== undefined;
  if (isObject && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

function turns(messages: readonly ChatMessage[]): Turn[] {
  const out: Turn[] = [];
  const push = (role: Turn['role'], content: Block[]) => {
    if (content.length === 0) return;
    const last = out[out.length - 1];
    if (last !== undefined && last.role === role) last.content.push(...content);
    else out.push({ role, content });
  };
  for (const m of messages) {
    switch (m.role) {
      case 'system':
      case 'developer':
        break;
      case 'user':
        push('user', userBlocks(m.content, m.cacheControls));
        break;
      case 'assistant': {
        const blocks: Block[] = [];
        if (m.content !== null && m.content !== '') blocks.push({ type: 'text', text: m.content });
        for (const c of m.toolCalls ?? []) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: argumentsObject(c.arguments) });
        markLast(blocks, m.cacheControl);
        push('assistant', blocks);
        break;
      }
      case 'tool':
        push('user', [{ type: 'tool_result', tool_use_id: m.toolCallId, ...(m.content === '' ? {} : { content: m.content }), ...cacheControlOf(m.cacheControl) }]);
        break;
    }
  }
  // A tool_result must come first in its user turn.
  for (const turn of out) {
    if (turn.role !== 'user') continue;
    const results = turn.content.filter((b) => b.type === 'tool_result');
    if (results.length > 0) turn.content = [...results, ...turn.content.filter((b) => b.type !== 'tool_result')];
  }
  return out;
}

/** A user message's blocks; `marks[i]` is the breakpoint after content part i (on the block before it when the part makes none). */
function userBlocks(content: string | ContentPart[], marks: readonly (CacheControl | undefined)[] | undefined): Block[] {
  const blocks: Block[] = [];
  const parts = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  parts.forEach((part, i) => {
    const block = userBlock(part);
    if (block !== undefined) blocks.push(block);
    markLast(blocks, marks?.[i]);
  });
  return blocks;
}

function userBlock(part: ContentPart): Block | undefined {
  if (part.type === 'text') return typeof part.text === 'string' && part.text !== '' ? { type: 'text', text: part.text } : undefined;
  if (part.type === 'image_url') {
    const url = imageUrlOf(part) ?? '';
    const data = parseDataUrl(url);
    return { type: 'image', source: data === undefined ? { type: 'url', url } : { type: 'base64', media_type: data.mimeType, data: data.data } };
  }
  if (part.type === 'file') {
    const data = parseDataUrl(fileDataOf(part) ?? '');
    if (data !== undefined) return { type: 'document', source: { type: 'base64', media_type: data.mimeType, data: data.data } };
  }
  return undefined;
}
