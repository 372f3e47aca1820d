/**
 * Answers that follow the request, as a model would, for requests no scenario scripts
 * (`startEmulator(kind, { followRequests: true })`; the demo turns it on): a tool call where
 * tools are offered and the model may or must call one (never right after a tool's result),
 * and JSON valid against the schema asked for (structured output, native or as the
 * gateway's instruction). Each protocol's request is read here, so protocol modules stay as
 * they are; the answer is an ordinary scenario, rendered by the protocol like any other.
 */
import type { EmulatorKind, Scenario } from './types.ts';
import { isRecord } from './util.ts';

/** What a request asks of its answer, in protocol-neutral terms. */
export interface AnswerAsk {
  tools: { name: string; schema: unknown }[];
  /** none: no tool; auto: the model may call one; required: it must; `{ name }`: it must call that one. */
  toolChoice: 'none' | 'auto' | 'required' | { name: string };
  /** The conversation ends with a tool's result: the model answers it in words. */
  afterToolResult: boolean;
  /** The schema the answer's text must validate against; `{}` for a bare JSON-object mode. */
  schema: unknown;
}

const FOLLOWED = new WeakSet<Scenario>();

/** Whether a scenario was made here (core adds the request's default reasoning to it, as to the built-in answer). */
export function isFollowed(s: Scenario): boolean {
  return FOLLOWED.has(s);
}

/** The scenario that follows a chat request of this protocol, or null for the built-in answer (or a request that is not a chat). */
export function followRequest(kind: EmulatorKind, body: unknown): Scenario | null {
  if (!isRecord(body)) return null;
  const ask = READERS[kind]?.(body);
  if (ask === undefined) return null;
  const s = answerFor(ask);
  if (s !== null) FOLLOWED.add(s);
  return s;
}

function answerFor(ask: AnswerAsk): Scenario | null {
  const choice = ask.toolChoice;
  const tool = typeof choice === 'object' ? ask.tools.find((t) => t.name === choice.name) : ask.tools[0];
  const mayCall = tool !== undefined && choice !== 'none' && !(choice === 'auto' && ask.afterToolResult);
  if (mayCall) return { kind: 'tool_calls', calls: [{ name: tool.name, arguments: objectFrom(tool.schema) }] };
  if (ask.schema !== undefined) return { kind: 'text', text: JSON.stringify(objectFrom(ask.schema)) };
  return null;
}

/** Tool arguments and structured answers are objects: anything else the schema yields is wrapped. */
function objectFrom(schema: unknown): Record<string, unknown> {
  const value = sampleFromSchema(schema);
  return isRecord(value) ? value : { value };
}

// ---------------------------------------------------------------------------
// A value valid against a JSON schema (the subset tools and structured outputs use)

const MAX_DEPTH = 12;

/** A JSON value that validates against `schema`: every property of an object, one item of an array, the first of a choice. */
export function sampleFromSchema(schema: unknown, root: unknown = schema, depth = 0, name = 'value'): unknown {
  if (schema === true || !isRecord(schema)) return {};
  if (depth > MAX_DEPTH) return null;
  const ref = schema.$ref;
  if (typeof ref === 'string') return sampleFromSchema(resolveRef(ref, root), root, depth + 1, name);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) return sampleFromSchema(options.find((o) => !isNullSchema(o)) ?? options[0], root, depth + 1, name);
  }
  if (Array.isArray(schema.allOf)) return sampleFromSchema(mergeAll(schema.allOf, root), root, depth + 1, name);
  const type = typeOf(schema);
  switch (type) {
    case 'object':
      return objectSample(schema, root, depth);
    case 'array': {
      const min = typeof schema.minItems === 'number' ? schema.minItems : 1;
      const max = typeof schema.maxItems === 'number' ? schema.maxItems : Math.max(min, 1);
      return Array.from({ length: Math.min(Math.max(min, 1), max) }, () => sampleFromSchema(schema.items ?? {}, root, depth + 1, name));
    }
    case 'string':
      return stringSample(schema, name);
    case 'integer':
    case 'number':
      return numberSample(schema, type === 'integer');
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return {};
  }
}

function objectSample(schema: Record<string, unknown>, root: unknown, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  // Every property, so the answer shows the whole shape; deep in a recursive schema, only the required ones.
  for (const [key, sub] of Object.entries(properties)) {
    if (depth >= MAX_DEPTH / 2 && !required.has(key)) continue;
    out[key] = sampleFromSchema(sub, root, depth + 1, key);
  }
  for (const key of required) if (!(key in out)) out[key] = 'example';
  return out;
}

function stringSample(schema: Record<string, unknown>, name: string): string {
  const formats: Record<string, string> = {
    date: '2026-01-15',
    'date-time': '2026-01-15T09:30:00Z',
    time: '09:30:00',
    email: 'someone@example.com',
    uri: 'https://example.com/',
    url: 'https://example.com/',
    uuid: '123e4567-e89b-42d3-a456-426614174000',
    ipv4: '192.0.2.1',
  };
  let text = (typeof schema.format === 'string' ? formats[schema.format.toLowerCase()] : undefined) ?? `example ${name}`;
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  if (text.length < min) text = text.padEnd(min, 'x');
  return text.slice(0, max);
}

function numberSample(schema: Record<string, unknown>, integer: boolean): number {
  const low = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + (integer ? 1 : 0.5) : undefined;
  const high = typeof schema.maximum === 'number' ? schema.maximum : typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - (integer ? 1 : 0.5) : undefined;
  let n = low ?? (high !== undefined ? Math.min(high, 1) : 1);
  if (integer) n = low === undefined ? Math.floor(n) : Math.ceil(n);
  const step = typeof schema.multipleOf === 'number' && schema.multipleOf > 0 ? schema.multipleOf : undefined;
  if (step !== undefined) n = Math.ceil(n / step) * step;
  return n;
}

function typeOf(schema: Record<string, unknown>): string | undefined {
  const type = schema.type;
  // Gemini's schemas write types in capitals (OBJECT, STRING); a nullable type list takes its first real type.
  const first = Array.isArray(type) ? (type.find((t) => t !== 'null') ?? type[0]) : type;
  if (typeof first === 'string') return first.toLowerCase();
  if (isRecord(schema.properties)) return 'object';
  if (schema.items !== undefined) return 'array';
  return undefined;
}

function isNullSchema(schema: unknown): boolean {
  return isRecord(schema) && typeof schema.type === 'string' && schema.type.toLowerCase() === 'null';
}

function resolveRef(ref: string, root: unknown): unknown {
  if (!ref.startsWith('#')) return {};
  let node: unknown = root;
  for (const part of ref.slice(1).split('/').filter((p) => p !== '')) {
    node = isRecord(node) ? node[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  }
  return node ?? {};
}

function mergeAll(parts: unknown[], root: unknown): Record<string, unknown> {
  const merged: Record<string, unknown> = { type: 'object', properties: {}, required: [] };
  for (const part of parts) {
    const resolved = isRecord(part) && typeof part.$ref === 'string' ? resolveRef(part.$ref, root) : part;
    if (!isRecord(resolved)) continue;
    Object.assign(merged.properties as object, isRecord(resolved.properties) ? resolved.properties : {});
    if (Array.isArray(resolved.required)) (merged.required as unknown[]).push(...resolved.required);
    if (resolved.type !== undefined && resolved.type !== 'object') return resolved;
  }
  return merged;
}

// ---------------------------------------------------------------------------
// Each protocol's request, read as an AnswerAsk (undefined: not a chat request)

/** The schema the gateway writes into its instruction when the provider enforces none (src/providers/structured-output.ts). */
function instructedSchema(texts: string[]): unknown {
  for (const text of texts) {
    const at = text.indexOf('validates against this JSON schema');
    if (at === -1) continue;
    const start = text.indexOf('\n', at);
    try {
      return JSON.parse(text.slice(start + 1).trim());
    } catch {
      continue;
    }
  }
  return texts.some((t) => /single JSON object/.test(t)) ? {} : undefined;
}

/** A forced tool choice the gateway sends as an instruction (src/providers/translation.ts), read as the model reads it. */
function instructedChoice(texts: string[], otherwise: AnswerAsk['toolChoice']): AnswerAsk['toolChoice'] {
  for (const text of texts) {
    const named = /you must call the tool "([^"]+)"/.exec(text);
    if (named !== null) return { name: named[1] as string };
    if (text.includes('you must call at least one of the provided tools')) return 'required';
  }
  return otherwise;
}

function textsOf(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part) => (isRecord(part) && typeof part.text === 'string' ? [part.text] : []));
}

function openAIAsk(body: Record<string, unknown>): AnswerAsk | undefined {
  if (!Array.isArray(body.messages)) return undefined;
  const tools = (Array.isArray(body.tools) ? body.tools : []).flatMap((t) => {
    const fn = isRecord(t) && isRecord(t.function) ? t.function : undefined;
    return fn !== undefined && typeof fn.name === 'string' ? [{ name: fn.name, schema: fn.parameters ?? {} }] : [];
  });
  const tc = body.tool_choice;
  const toolChoice = tc === 'none' || tc === 'required' ? tc : isRecord(tc) && isRecord(tc.function) && typeof tc.function.name === 'string' ? { name: tc.function.name } : 'auto';
  const last = body.messages.at(-1);
  const rf = isRecord(body.response_format) ? body.response_format : undefined;
  const native = rf?.type === 'json_schema' && isRecord(rf.json_schema) ? (rf.json_schema.schema ?? {}) : undefined;
  const instructed = rf?.type === 'json_object' ? (instructedSchema(body.messages.flatMap((m) => (isRecord(m) ? textsOf(m.content) : []))) ?? {}) : undefined;
  return { tools, toolChoice, afterToolResult: isRecord(last) && last.role === 'tool', schema: native ?? instructed };
}

/** provider_1's Responses body: flat function and custom tools (also inside a `namespace` or an `additional_tools` item), `text.format`. */
function responsesAsk(body: Record<string, unknown>): AnswerAsk | undefined {
  if (body.input === undefined) return undefined;
  const tools: AnswerAsk['tools'] = [];
  const walk = (list: unknown): void => {
    for (const t of Array.isArray(list) ? list : []) {
      if (!isRecord(t)) continue;
      if (t.type === 'function' && typeof t.name === 'string') tools.push({ name: t.name, schema: t.parameters ?? {} });
      if (t.type === 'custom' && typeof t.name === 'string') tools.push({ name: t.name, schema: { type: 'object', properties: { input: { type: 'string' } } } });
      walk(t.tools);
    }
  };
  walk(body.tools);
  // Codex declares tools in `additional_tools` input items too.
  for (const item of Array.isArray(body.input) ? body.input : []) if (isRecord(item) && item.type === 'additional_tools') walk(item.tools);
  const tc = body.tool_choice;
  const toolChoice = tc === 'none' || tc === 'required' ? tc : isRecord(tc) && typeof tc.name === 'string' ? { name: tc.name } : 'auto';
  const last = Array.isArray(body.input) ? body.input.at(-1) : undefined;
  const afterToolResult = isRecord(last) && (last.type === 'function_call_output' || last.type === 'custom_tool_call_output');
  const format = isRecord(body.text) && isRecord(body.text.format) ? body.text.format : undefined;
  const schema = format?.type === 'json_schema' ? (format.schema ?? {}) : format?.type === 'json_object' ? {} : undefined;
  return { tools, toolChoice, afterToolResult, schema };
}

function anthropicAsk(body: Record<string, unknown>): AnswerAsk | undefined {
  if (!Array.isArray(body.messages)) return undefined;
  const tools = (Array.isArray(body.tools) ? body.tools : []).flatMap((t) => (isRecord(t) && typeof t.name === 'string' ? [{ name: t.name, schema: t.input_schema ?? {} }] : []));
  const tc = isRecord(body.tool_choice) ? body.tool_choice : undefined;
  const toolChoice = tc?.type === 'none' ? 'none' : tc?.type === 'any' ? 'required' : tc?.type === 'tool' && typeof tc.name === 'string' ? { name: tc.name } : 'auto';
  const last = body.messages.at(-1);
  const afterToolResult = isRecord(last) && Array.isArray(last.content) && last.content.some((b) => isRecord(b) && b.type === 'tool_result');
  const format = isRecord(body.output_config) && isRecord(body.output_config.format) ? body.output_config.format : isRecord(body.output_format) ? body.output_format : undefined;
  const native = format?.type === 'json_schema' ? (format.schema ?? {}) : undefined;
  const system = typeof body.system === 'string' ? [body.system] : textsOf(body.system);
  return { tools, toolChoice: instructedChoice(system, toolChoice), afterToolResult, schema: native ?? instructedSchema(system) };
}

function geminiAsk(body: Record<string, unknown>): AnswerAsk | undefined {
  if (!Array.isArray(body.contents)) return undefined;
  const declarations = (Array.isArray(body.tools) ? body.tools : []).flatMap((t) => (isRecord(t) && Array.isArray(t.functionDeclarations) ? t.functionDeclarations : []));
  const tools = declarations.flatMap((d) => (isRecord(d) && typeof d.name === 'string' ? [{ name: d.name, schema: d.parametersJsonSchema ?? d.parameters ?? {} }] : []));
  const config = isRecord(body.toolConfig) && isRecord(body.toolConfig.functionCallingConfig) ? body.toolConfig.functionCallingConfig : undefined;
  const mode = typeof config?.mode === 'string' ? config.mode.toUpperCase() : 'AUTO';
  const allowed = Array.isArray(config?.allowedFunctionNames) ? config.allowedFunctionNames : [];
  const toolChoice = mode === 'NONE' ? 'none' : mode === 'ANY' ? (allowed.length === 1 && typeof allowed[0] === 'string' ? { name: allowed[0] } : 'required') : 'auto';
  const last = body.contents.at(-1);
  const afterToolResult = isRecord(last) && Array.isArray(last.parts) && last.parts.some((p) => isRecord(p) && p.functionResponse !== undefined);
  const gc = isRecord(body.generationConfig) ? body.generationConfig : {};
  const json = gc.responseMimeType === 'application/json';
  const system = isRecord(body.systemInstruction) ? textsOf(body.systemInstruction.parts) : [];
  const schema = json ? (gc.responseJsonSchema ?? gc.responseSchema ?? instructedSchema(system) ?? {}) : undefined;
  return { tools, toolChoice, afterToolResult, schema };
}

const READERS: Partial<Record<EmulatorKind, (body: Record<string, unknown>) => AnswerAsk | undefined>> = {
  openai: (body) => openAIAsk(body) ?? responsesAsk(body),
  deepseek: openAIAsk,
  anthropic: anthropicAsk,
  gemini: geminiAsk,
};
