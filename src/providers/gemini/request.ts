/**
 * Chat-completions request → Gemini generateContent request body (providers.md §3).
 * system/developer → `systemInstruction`; roles user/model with same-role neighbours
 * merged; assistant tool_calls → functionCall parts; tool messages → functionResponse
 * parts named after the call they answer; tool_choice → functionCallingConfig;
 * structured output → responseMimeType + responseJsonSchema.
 */
import type { ChatMessage, ContentPart, ResponseFormat } from '../../shared/chat-wire.ts';
import type { ProviderCall } from '../adapter.ts';
import { argumentsObject, fileDataOf, findToolCall, forcedByInstruction, imageUrlOf, instructions, parseDataUrl, systemText, unknownToolCall } from '../translation.ts';
import { nestsDeeperThan } from '../../shared/json-depth.ts';
import { toGeminiSchema } from './json-schema.ts';

type Json = Record<string, unknown>;
type Part = Json;

interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

/**
 * Gemini 3 wants the thought signature of a model step's first functionCall back;
 * chat-completions clients never keep it, so the value Google documents for
 * replayed history stands in for it.
 */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

export function geminiBody(call: ProviderCall): Json {
  const body: Json = { contents: contents(call.messages) };
  const system = [systemText(call.messages), ...instructions(call, true)].filter((s) => s !== '').join('\n\n');
  if (system !== '') body.systemInstruction = { parts: [{ text: system }] };
  if (call.tools !== undefined) {
    body.tools = [{
      functionDeclarations: call.tools.map((t, i) => ({
        name: t.name,
        ...(t.description === undefined ? {} : { description: t.description }),
        ...(t.parameters === undefined ? {} : { parametersJsonSchema: toGeminiSchema(t.parameters, `tools[${i}].function.parameters`) }),
      })),
    }];
    const config = callingConfig(call);
    if (config !== undefined) body.toolConfig = { functionCallingConfig: config };
  }
  const generation: Json = { maxOutputTokens: call.maxTokens };
  if (call.stop !== undefined) generation.stopSequences = call.stop;
  if (call.temperature !== undefined) generation.temperature = call.temperature;
  if (call.top_p !== undefined) generation.topP = call.top_p;
  if (call.seed !== undefined) generation.seed = call.seed;
  if (call.frequency_penalty !== undefined) generation.frequencyPenalty = call.frequency_penalty;
  if (call.presence_penalty !== undefined) generation.presencePenalty = call.presence_penalty;
  Object.assign(generation, responseFormat(call.response_format, call.routing.json_schema === 'native'));
  if (call.routing.reasoning) generation.thinkingConfig = { includeThoughts: true };
  body.generationConfig = generation;
  return body;
}

function callingConfig(call: ProviderCall): Json | undefined {
  const choice = call.tool_choice;
  if (choice === undefined) return undefined;
  if (choice === 'none') return { mode: 'NONE' };
  if (choice === 'auto' || forcedByInstruction(call)) return { mode: 'AUTO' };
  if (choice === 'required') return { mode: 'ANY' };
  return { mode: 'ANY', allowedFunctionNames: [choice.name] };
}

function responseFormat(format: ResponseFormat | undefined, native: boolean): Json {
  if (format === undefined || format.type === 'text') return {};
  if (format.type === 'json_schema' && native) return { responseMimeType: 'application/json', responseJsonSchema: toGeminiSchema(format.schema, 'response_format.json_schema.schema') };
  // json_object, or a schema that travels as an instruction: JSON mode.
  return { responseMimeType: 'application/json' };
}

function contents(messages: readonly ChatMessage[]): Content[] {
  const out: Content[] = [];
  const push = (role: Content['role'], parts: Part[]) => {
    if (parts.length === 0) return;
    const last = out[out.length - 1];
    if (last !== undefined && last.role === role) last.parts.push(...parts);
    else out.push({ role, parts });
  };
  messages.forEach((m, i) => {
    switch (m.role) {
      case 'system':
      case 'developer':
        return;
      case 'user':
        push('user', userParts(m.content));
        return;
      case 'assistant': {
        const parts: Part[] = [];
        if (m.content !== null && m.content !== '') parts.push({ text: m.content });
        (m.toolCalls ?? []).forEach((c, k) => {
          const part: Part = { functionCall: { name: c.name, args: argumentsObject(c.arguments) } };
          if (k === 0) part.thoughtSignature = SKIP_SIGNATURE;
          parts.push(part);
        });
        push('model', parts);
        return;
      }
      case 'tool': {
        const called = findToolCall(messages, i, m.toolCallId);
        if (called === undefined) throw unknownToolCall(i, m.toolCallId);
        push('user', [{ functionResponse: { name: called.name, response: toolResponse(m.content) } }]);
        return;
      }
    }
  });
  return out;
}

/** A functionResponse must be an object: a JSON object result is sent as is, anything else as `{result: …}`. */
function toolResponse(content: string): Json {
  try {
    const value: unknown = JSON.parse(content);
    // Too deep to embed (and to serialise) safely: it travels as its text.
    if (typeof value === 'object' && value !== null && !Array.isArray(value) && !nestsDeeperThan(value)) return value as Json;
  } catch {
    // Plain text.
  }
  return { result: content };
}

function userParts(content: string | ContentPart[]): Part[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  const parts: Part[] = [];
  for (const part of content) {
    if (part.type === 'text') {
      if (typeof part.text === 'string' && part.text !== '') parts.push({ text: part.text });
      continue;
    }
    // Content support lets only inline data reach provider_3 (base64 images, PDFs).
    const data = parseDataUrl((part.type === 'image_url' ? imageUrlOf(part) : fileDataOf(part)) ?? '');
    if (data !== undefined) parts.push({ inlineData: { mimeType: data.mimeType, data: data.data } });
  }
  return parts;
}
