/**
 * provider_3: Gemini API (generateContent).
 * Base URL `http://host:port`; `POST /v1beta/models/{model}:generateContent`,
 * `:streamGenerateContent?alt=sse` (SSE, `data:` only, ends at EOF; without alt=sse a streamed
 * JSON array), `:embedContent`, `:batchEmbedContents`. Key in `x-goog-api-key` or `?key=`.
 * Streams: parts carry only new text, functionCall parts arrive whole, usageMetadata is cumulative
 * on every chunk, finishReason only on the last chunk. A bad key is a 400 API_KEY_INVALID.
 */
import {
  buildAnswer,
  header,
  jsonReply,
  startServer,
  streamEnd,
  type Answer,
  type Exchange,
  type Picked,
  type ProtocolImpl,
  type Reply,
  type SseReply,
} from './core.ts';
import type { Emulator, Scenario, ScenarioOptions, ScenarioUsage, StartOptions } from './types.ts';
import { isRecord, randomId, splitText, unitVector } from './util.ts';

const ROUTE = /^\/(v1beta|v1|v1alpha)\/(models|tunedModels)\/([^/:]+):([A-Za-z]+)$/;

const STATUS_NAME: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

function snake(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Accept both lowerCamelCase and snake_case spellings of every field. */
function fieldSet(names: string[]): Set<string> {
  return new Set(names.flatMap((n) => [n, snake(n)]));
}

const TOP_LEVEL = fieldSet(['contents', 'tools', 'toolConfig', 'safetySettings', 'systemInstruction', 'generationConfig', 'cachedContent', 'labels', 'model', 'serviceTier', 'store']);
const GENERATION_CONFIG = fieldSet([
  'stopSequences', 'responseMimeType', 'responseSchema', 'responseJsonSchema', '_responseJsonSchema', 'responseModalities', 'candidateCount',
  'maxOutputTokens', 'temperature', 'topP', 'topK', 'seed', 'presencePenalty', 'frequencyPenalty', 'responseLogprobs', 'logprobs',
  'enableEnhancedCivicAnswers', 'speechConfig', 'thinkingConfig', 'imageConfig', 'mediaResolution', 'audioTimestamp', 'routingConfig',
]);
const PART_DATA = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'];
const PART_FIELDS = fieldSet([...PART_DATA, 'thought', 'thoughtSignature', 'videoMetadata', 'partMetadata', 'mediaResolution']);
const MODES = new Set(['AUTO', 'ANY', 'NONE', 'VALIDATED', 'MODE_UNSPECIFIED']);
const FUNCTION_NAME = /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$/;

function get(o: Record<string, unknown>, camel: string): unknown {
  const v = o[camel];
  return v !== undefined ? v : o[snake(camel)];
}

// ---------------------------------------------------------------------------
// Errors

interface GoogleError {
  status: number;
  message: string;
  details?: unknown[];
  headers?: Record<string, string>;
}

function errorBody(e: GoogleError): Record<string, unknown> {
  const error: Record<string, unknown> = { code: e.status, message: e.message, status: STATUS_NAME[e.status] ?? 'UNKNOWN' };
  if (e.details !== undefined) error.details = e.details;
  return { error };
}

function fail(e: GoogleError, opts?: ScenarioOptions): Reply {
  return jsonReply(e.status, errorBody(e), { vary: 'Origin, X-Origin, Referer', ...(e.headers ?? {}) }, opts);
}

function invalid(message: string, fieldViolation = false): GoogleError {
  return fieldViolation
    ? { status: 400, message, details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ description: message }] }] }
    : { status: 400, message };
}

const BAD_KEY: GoogleError = {
  status: 400,
  message: 'API key not valid. Please pass a valid API key.',
  details: [
    { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
    { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: 'API key not valid. Please pass a valid API key.' },
  ],
};

export function geminiErrorFor(status: number, model: string, method = 'generateContent'): GoogleError {
  switch (status) {
    case 400:
      return { status, message: 'Request contains an invalid argument.' };
    case 401:
      return { status, message: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.' };
    case 403:
      return { status, message: 'The caller does not have permission' };
    case 404:
      return { status, message: `models/${model} is not found for API version v1beta, or is not supported for ${method}. Call ListModels to see the list of available models and their supported methods.` };
    case 429:
      return {
        status,
        message: 'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.',
        details: [
          {
            '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
            violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests', quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier', quotaDimensions: { location: 'global', model }, quotaValue: '10' }],
          },
          { '@type': 'type.googleapis.com/google.rpc.Help', links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }] },
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' },
        ],
      };
    case 500:
      return { status, message: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting' };
    case 503:
      return { status, message: 'The model is overloaded. Please try again later.' };
    case 504:
      return { status, message: 'Deadline expired before operation could complete.' };
    default:
      return { status, message: status >= 500 ? 'An internal error has occurred.' : `Request failed with status ${status} (emulated).` };
  }
}

// ---------------------------------------------------------------------------
// Validation

function structError(path: string, v: unknown): GoogleError {
  return Array.isArray(v)
    ? invalid(`Invalid JSON payload received. Proto field is not repeating, cannot start list.`, true)
    : invalid(`Invalid value at '${path}' (type.googleapis.com/google.protobuf.Struct), ${JSON.stringify(v)}`, true);
}

function validateParts(parts: unknown, at: string, where: string): GoogleError | undefined {
  if (!Array.isArray(parts) || parts.length === 0) return invalid(`* GenerateContentRequest.${where}.parts: contents.parts must not be empty.\n`);
  for (let j = 0; j < parts.length; j++) {
    const p: unknown = parts[j];
    const pat = `${at}.parts[${j}]`;
    if (!isRecord(p)) return invalid(`Invalid value at '${pat}' (type.googleapis.com/google.ai.generativelanguage.v1beta.Part), ${JSON.stringify(p)}`, true);
    for (const k of Object.keys(p)) if (!PART_FIELDS.has(k)) return invalid(`Invalid JSON payload received. Unknown name "${k}" at '${pat}': Cannot find field.`, true);
    const set = PART_DATA.filter((d) => get(p, d) !== undefined);
    if (set.length === 0) return invalid(`* GenerateContentRequest.${where}.parts[${j}].data: required oneof field 'data' must have one initialized field\n`);
    if (set.length > 1) return invalid(`Invalid JSON payload received. Oneof field 'data' is already set. Cannot set '${set[1] ?? ''}'`, true);
    const text = get(p, 'text');
    if (text !== undefined && typeof text !== 'string') return invalid(`Invalid value at '${pat}.text' (TYPE_STRING), ${JSON.stringify(text)}`, true);
    const inline = get(p, 'inlineData');
    if (inline !== undefined && (!isRecord(inline) || typeof get(inline, 'data') !== 'string' || typeof get(inline, 'mimeType') !== 'string')) {
      return invalid(`* GenerateContentRequest.${where}.parts[${j}].inline_data.mime_type: required field is not set.\n`);
    }
    const fc = get(p, 'functionCall');
    if (fc !== undefined) {
      if (!isRecord(fc) || typeof fc.name !== 'string' || fc.name === '') return invalid(`* GenerateContentRequest.${where}.parts[${j}].function_call.name: Name cannot be empty.\n`);
      if (fc.args !== undefined && !isRecord(fc.args)) return structError(`${pat}.function_call.args`, fc.args);
    }
    const fr = get(p, 'functionResponse');
    if (fr !== undefined) {
      if (!isRecord(fr) || typeof fr.name !== 'string' || fr.name === '') return invalid(`* GenerateContentRequest.${where}.parts[${j}].function_response.name: Name cannot be empty.\n`);
      if (fr.response === undefined) return invalid(`* GenerateContentRequest.${where}.parts[${j}].function_response.response: required field is not set.\n`);
      if (!isRecord(fr.response)) return structError(`${pat}.function_response.response`, fr.response);
    }
  }
  return undefined;
}

function isGemini3(model: string): boolean {
  return /^gemini-3/.test(model);
}

function validate(model: string, body: Record<string, unknown>): GoogleError | undefined {
  for (const k of Object.keys(body)) if (!TOP_LEVEL.has(k)) return invalid(`Invalid JSON payload received. Unknown name "${k}": Cannot find field.`, true);
  const contents = get(body, 'contents');
  if (contents === undefined || (Array.isArray(contents) && contents.length === 0)) return invalid('* GenerateContentRequest.contents: contents is not specified\n');
  if (!Array.isArray(contents)) return invalid(`Invalid value at 'contents' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), ${JSON.stringify(contents)}`, true);
  for (let i = 0; i < contents.length; i++) {
    const c: unknown = contents[i];
    if (!isRecord(c)) return invalid(`Invalid value at 'contents[${i}]' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), ${JSON.stringify(c)}`, true);
    if (c.role !== undefined && c.role !== 'user' && c.role !== 'model') return invalid('Please use a valid role: user, model.');
    const bad = validateParts(c.parts, `contents[${i}]`, `contents[${i}]`);
    if (bad !== undefined) return bad;
  }
  const si = get(body, 'systemInstruction');
  if (si !== undefined) {
    if (!isRecord(si)) return invalid(`Invalid value at 'system_instruction' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), ${JSON.stringify(si)}`, true);
    const bad = validateParts(si.parts, 'system_instruction', 'system_instruction');
    if (bad !== undefined) return bad;
  }

  const gc = get(body, 'generationConfig');
  if (gc !== undefined) {
    if (!isRecord(gc)) return invalid(`Invalid value at 'generation_config' (type.googleapis.com/google.ai.generativelanguage.v1beta.GenerationConfig), ${JSON.stringify(gc)}`, true);
    for (const k of Object.keys(gc)) if (!GENERATION_CONFIG.has(k)) return invalid(`Invalid JSON payload received. Unknown name "${k}" at 'generation_config': Cannot find field.`, true);
    const t = get(gc, 'temperature');
    if (t !== undefined && (typeof t !== 'number' || t < 0 || t > 2)) return invalid('* GenerateContentRequest.generation_config.temperature: temperature must be in the range [0.0, 2.0]\n');
    const schema = get(gc, 'responseSchema');
    const jsonSchema = get(gc, 'responseJsonSchema') ?? get(gc, '_responseJsonSchema');
    if (schema !== undefined && jsonSchema !== undefined) return invalid('* GenerateContentRequest.generation_config.response_schema: response_schema and response_json_schema cannot both be set.\n');
    const mime = get(gc, 'responseMimeType');
    if ((schema !== undefined || jsonSchema !== undefined) && mime !== 'application/json' && mime !== 'text/x.enum') {
      return invalid('* GenerateContentRequest.generation_config.response_mime_type: must be set to `application/json` or `text/x.enum` when a response schema is set.\n');
    }
    const tc = get(gc, 'thinkingConfig');
    if (isRecord(tc) && get(tc, 'thinkingBudget') !== undefined && get(tc, 'thinkingLevel') !== undefined) {
      return invalid('You can only set only one of thinking budget and thinking level.');
    }
  }

  const tools = get(body, 'tools');
  if (tools !== undefined) {
    if (!Array.isArray(tools)) return invalid(`Invalid value at 'tools' (type.googleapis.com/google.ai.generativelanguage.v1beta.Tool), ${JSON.stringify(tools)}`, true);
    for (let i = 0; i < tools.length; i++) {
      const tool: unknown = tools[i];
      if (!isRecord(tool)) return invalid(`Invalid value at 'tools[${i}]' (type.googleapis.com/google.ai.generativelanguage.v1beta.Tool), ${JSON.stringify(tool)}`, true);
      const decls = get(tool, 'functionDeclarations');
      if (decls === undefined) continue;
      if (!Array.isArray(decls)) return invalid(`Invalid value at 'tools[${i}].function_declarations' (type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionDeclaration), ${JSON.stringify(decls)}`, true);
      for (let j = 0; j < decls.length; j++) {
        const d: unknown = decls[j];
        const name = isRecord(d) ? d.name : undefined;
        if (typeof name !== 'string' || !FUNCTION_NAME.test(name)) {
          return invalid(`* GenerateContentRequest.tools[${i}].function_declarations[${j}].name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 128.\n`);
        }
        if (isRecord(d) && get(d, 'parameters') !== undefined && get(d, 'parametersJsonSchema') !== undefined) {
          return invalid(`* GenerateContentRequest.tools[${i}].function_declarations[${j}].parameters: parameters and parameters_json_schema cannot both be set.\n`);
        }
      }
    }
  }
  const toolConfig = get(body, 'toolConfig');
  if (isRecord(toolConfig)) {
    const fcc = get(toolConfig, 'functionCallingConfig');
    if (isRecord(fcc)) {
      const mode = fcc.mode;
      if (mode !== undefined && (typeof mode !== 'string' || !MODES.has(mode))) {
        return invalid(`Invalid value at 'tool_config.function_calling_config.mode' (type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode), ${JSON.stringify(mode)}`, true);
      }
      if (get(fcc, 'allowedFunctionNames') !== undefined && mode !== 'ANY' && mode !== 'VALIDATED') {
        return invalid('* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: allowed_function_names can only be set when mode is ANY or VALIDATED.\n');
      }
    }
  }

  // Gemini 3: in the current turn (since the last user text), each model step's first functionCall needs its thoughtSignature.
  if (isGemini3(model)) {
    let turnStart = 0;
    for (let i = contents.length - 1; i >= 0; i--) {
      const c = contents[i] as Record<string, unknown>;
      if (c.role !== 'model' && (c.parts as unknown[]).some((p) => isRecord(p) && typeof p.text === 'string')) {
        turnStart = i;
        break;
      }
    }
    for (let i = turnStart; i < contents.length; i++) {
      const c = contents[i] as Record<string, unknown>;
      if (c.role !== 'model') continue;
      const parts = c.parts as Record<string, unknown>[];
      const j = parts.findIndex((p) => get(p, 'functionCall') !== undefined);
      if (j !== -1 && get(parts[j] as Record<string, unknown>, 'thoughtSignature') === undefined) {
        const fc = get(parts[j] as Record<string, unknown>, 'functionCall') as Record<string, unknown>;
        return invalid(`Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${String(fc.name)}\` , position ${i + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`);
      }
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// Rendering

function partsText(parts: unknown): string {
  if (!Array.isArray(parts)) return '';
  let s = '';
  for (const p of parts) if (isRecord(p) && typeof p.text === 'string' && p.thought !== true) s = s === '' ? p.text : `${s} ${p.text}`;
  return s;
}

function inputStats(body: Record<string, unknown>): { chars: number; lastUser: string } {
  const si = get(body, 'systemInstruction');
  let chars = isRecord(si) ? partsText(si.parts).length : 0;
  let lastUser = '';
  const contents = get(body, 'contents') as Record<string, unknown>[];
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i] as Record<string, unknown>;
    const text = partsText(c.parts);
    chars += text.length;
    if (lastUser === '' && c.role !== 'model' && text !== '') lastUser = text;
    for (const p of c.parts as Record<string, unknown>[]) {
      const fr = get(p, 'functionResponse');
      if (isRecord(fr)) chars += JSON.stringify(fr.response).length;
      const fc = get(p, 'functionCall');
      if (isRecord(fc)) chars += JSON.stringify(fc.args ?? {}).length;
    }
  }
  return { chars, lastUser };
}

function usageMetadata(u: ScenarioUsage, candidates: number, thoughts: number, promptOnly = false): Record<string, unknown> {
  const out: Record<string, unknown> = { promptTokenCount: u.input };
  if (!promptOnly && candidates > 0) out.candidatesTokenCount = candidates;
  out.totalTokenCount = u.input + (promptOnly ? 0 : candidates + thoughts);
  if ((u.cacheRead ?? 0) > 0) {
    out.cachedContentTokenCount = u.cacheRead;
    out.cacheTokensDetails = [{ modality: 'TEXT', tokenCount: u.cacheRead }];
  }
  out.promptTokensDetails = [{ modality: 'TEXT', tokenCount: u.input }];
  if (!promptOnly && thoughts > 0) out.thoughtsTokenCount = thoughts;
  return out;
}

function thoughtSignature(): string {
  return `CiQB${randomId(70)}`;
}

function callParts(a: Answer, model: string): Record<string, unknown>[] {
  return a.calls.map((c, i) => {
    const part: Record<string, unknown> = { functionCall: { name: c.name, args: c.args } };
    if (i === 0 && isGemini3(model)) part.thoughtSignature = thoughtSignature();
    return part;
  });
}

function answerText(a: Answer): string {
  return a.text !== '' ? a.text : (a.refusal ?? '');
}

function candidate(parts: Record<string, unknown>[], finish: string | undefined): Record<string, unknown> {
  const c: Record<string, unknown> = {};
  if (parts.length > 0) c.content = { parts, role: 'model' };
  if (finish !== undefined) c.finishReason = finish;
  c.index = 0;
  return c;
}

function responseBody(a: Answer, model: string, responseId: string): Record<string, unknown> {
  if (a.blocked) {
    const out: Record<string, unknown> = { promptFeedback: { blockReason: 'SAFETY' } };
    if (a.usage !== null) out.usageMetadata = usageMetadata(a.usage, 0, 0, true);
    out.modelVersion = model;
    out.responseId = responseId;
    return out;
  }
  const parts: Record<string, unknown>[] = [];
  if (a.reasoning !== '') parts.push({ text: a.reasoning, thought: true });
  const text = answerText(a);
  if (text !== '') parts.push({ text });
  parts.push(...callParts(a, model));
  if (parts.length === 0 && a.finish === 'STOP') parts.push({ text: '' });
  const out: Record<string, unknown> = { candidates: [candidate(parts, a.finish)] };
  if (a.usage !== null) out.usageMetadata = usageMetadata(a.usage, a.usage.output, a.usage.reasoning ?? 0);
  out.modelVersion = model;
  out.responseId = responseId;
  return out;
}

function streamReply(a: Answer, model: string, responseId: string, sse: boolean, s: Scenario | null, picked: Picked): SseReply {
  const chunks: Record<string, unknown>[] = [];
  const u = a.usage;
  const tail = (candidates: number, thoughts: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    if (u !== null) out.usageMetadata = usageMetadata(u, candidates, thoughts);
    out.modelVersion = model;
    out.responseId = responseId;
    return out;
  };
  if (a.blocked) {
    chunks.push(responseBody(a, model, responseId));
  } else {
    // Pieces of (parts, share of text seen so far); the finish goes on the last one.
    const steps: { parts: Record<string, unknown>[]; thoughtShare: number; outShare: number }[] = [];
    const reasoning = a.reasoning;
    const text = answerText(a);
    const outChars = text.length + a.calls.reduce((n, c) => n + c.json.length, 0);
    let seenThought = 0;
    for (const piece of splitText(reasoning, Math.max(1, Math.ceil(a.chunks / 2)))) {
      seenThought += piece.length;
      steps.push({ parts: [{ text: piece, thought: true }], thoughtShare: seenThought / reasoning.length, outShare: 0 });
    }
    let seenOut = 0;
    for (const piece of splitText(text, a.chunks)) {
      seenOut += piece.length;
      steps.push({ parts: [{ text: piece }], thoughtShare: 1, outShare: seenOut / outChars });
    }
    if (a.calls.length > 0) steps.push({ parts: callParts(a, model), thoughtShare: 1, outShare: 1 });
    if (steps.length === 0) steps.push({ parts: [{ text: '' }], thoughtShare: 1, outShare: 1 });
    steps.forEach((st, k) => {
      const last = k === steps.length - 1;
      const cand = u === null ? 0 : last ? u.output : Math.round(u.output * st.outShare);
      const th = u === null ? 0 : last ? (u.reasoning ?? 0) : Math.round((u.reasoning ?? 0) * st.thoughtShare);
      chunks.push({ candidates: [candidate(st.parts, last ? a.finish : undefined)], ...tail(cand, th) });
    });
  }

  const events: string[] = [];
  const content: number[] = [];
  const errorJson = JSON.stringify(errorBody(geminiErrorFor(500, model)));
  chunks.forEach((c, k) => {
    content.push(events.length);
    const json = JSON.stringify(c);
    events.push(sse ? `data: ${json}\r\n\r\n` : k === 0 ? `[${json}` : `,\r\n${json}`);
  });
  const finishAt = events.length - 1;
  if (!sse) events.push(']');
  const { end, afterChunks } = streamEnd(s);
  return {
    type: 'sse',
    headers: sse
      ? { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', vary: 'Origin, X-Origin, Referer' }
      : { 'content-type': 'application/json; charset=UTF-8', vary: 'Origin, X-Origin, Referer' },
    events,
    content,
    finishAt,
    end,
    afterChunks,
    errorEvent: sse ? `data: ${errorJson}\r\n\r\n` : `${events.length > 0 ? ',\r\n' : '['}${errorJson}]`,
    opts: picked.opts,
  };
}

// ---------------------------------------------------------------------------
// Embeddings

function embeddingDims(model: string): number {
  return model === 'text-embedding-004' || model === 'embedding-001' ? 768 : 3072;
}

function embedValues(content: unknown, dims: unknown, model: string, override: number | undefined): { values: number[] } | GoogleError {
  if (!isRecord(content)) return invalid('* EmbedContentRequest.content: content is not specified\n');
  const bad = validateParts(content.parts, 'content', 'content');
  if (bad !== undefined) return bad;
  const text = partsText(content.parts);
  const n = override ?? (typeof dims === 'number' ? dims : embeddingDims(model));
  return { values: unitVector(text, n) };
}

function embed(ex: Exchange, model: string, method: string, body: Record<string, unknown>): Reply {
  let result: Record<string, unknown> | GoogleError;
  const run = (override: number | undefined): Record<string, unknown> | GoogleError => {
    if (method === 'embedContent') {
      const r = embedValues(body.content, get(body, 'outputDimensionality'), model, override);
      return 'values' in r ? { embedding: r } : r;
    }
    const requests = body.requests;
    if (!Array.isArray(requests) || requests.length === 0) return invalid('* BatchEmbedContentsRequest.requests: requests is not specified\n');
    if (requests.length > 100) return invalid('* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch\n');
    const embeddings: { values: number[] }[] = [];
    for (let i = 0; i < requests.length; i++) {
      const r: unknown = requests[i];
      if (!isRecord(r)) return invalid(`* BatchEmbedContentsRequest.requests[${i}]: request is not specified\n`);
      if (r.model !== `models/${model}`) return invalid(`* BatchEmbedContentsRequest.requests[${i}].model: model must match the model in the URL (models/${model}).\n`);
      const v = embedValues(r.content, get(r, 'outputDimensionality'), model, override);
      if (!('values' in v)) return v;
      embeddings.push(v);
    }
    return { embeddings };
  };
  // Validate before taking the scenario, like chat.
  result = run(1);
  if ('status' in result && typeof result.status === 'number') return fail(result as GoogleError);
  const picked = ex.take();
  const s = picked.scenario;
  if (s !== null) {
    if (s.kind === 'hang') return { type: 'hang' };
    if (s.kind === 'error') return scenarioError(s, model, picked, method);
  }
  result = run(s !== null && s.kind === 'embedding' ? s.dimensions : undefined) as Record<string, unknown>;
  return { ...jsonReply(200, result, {}, picked.opts), cut: s !== null && s.kind === 'cut' };
}

// ---------------------------------------------------------------------------

function scenarioError(s: Extract<Scenario, { kind: 'error' }>, model: string, picked: Picked, method: string): Reply {
  const def = geminiErrorFor(s.status, model, method);
  const body = s.body !== undefined ? s.body : errorBody(def);
  return jsonReply(s.status, body, { ...(def.headers ?? {}), ...(s.headers ?? {}) }, picked.opts);
}

function queryParam(search: string, name: string): string | undefined {
  if (search === '') return undefined;
  const v = new URLSearchParams(search).get(name);
  return v === null ? undefined : v;
}

function handle(ex: Exchange): Reply {
  const m = ROUTE.exec(ex.pathname);
  if (m === null) return fail({ status: 404, message: `The requested URL ${ex.pathname} was not found on this server.` });
  const model = decodeURIComponent(m[3] ?? '');
  const method = m[4] ?? '';
  if (!['generateContent', 'streamGenerateContent', 'embedContent', 'batchEmbedContents'].includes(method)) {
    return fail(geminiErrorFor(404, model, method));
  }
  if (ex.method !== 'POST') return fail({ status: 404, message: `The requested URL ${ex.pathname} was not found on this server.` });
  const key = header(ex, 'x-goog-api-key') ?? queryParam(ex.search, 'key');
  if (key === undefined || key === '') {
    return fail({
      status: 403,
      message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
    });
  }
  if (key !== ex.apiKey) return fail(BAD_KEY);
  if (ex.bodyInvalid || !isRecord(ex.body)) return fail(invalid('Invalid JSON payload received. Unexpected token.', true));
  const body = ex.body;
  if (method === 'embedContent' || method === 'batchEmbedContents') return embed(ex, model, method, body);

  const bad = validate(model, body);
  if (bad !== undefined) return fail(bad);
  const stream = method === 'streamGenerateContent';
  const sse = stream && queryParam(ex.search, 'alt') === 'sse';
  const picked = ex.take();
  const s = picked.scenario;
  if (s !== null) {
    if (s.kind === 'hang') return { type: 'hang' };
    if (s.kind === 'error') return scenarioError(s, model, picked, method);
    if (s.kind === 'stream_error' && !stream) return fail(geminiErrorFor(500, model), picked.opts);
  }
  const stats = inputStats(body);
  const gc = get(body, 'generationConfig');
  const tc = isRecord(gc) ? get(gc, 'thinkingConfig') : undefined;
  const answer = buildAnswer(s, {
    kind: 'gemini',
    inputChars: stats.chars,
    lastUserText: stats.lastUser,
    thinking: isRecord(tc) && get(tc, 'includeThoughts') === true,
    finishes: { stop: 'STOP', tool: 'STOP', filter: 'SAFETY', refusal: 'SAFETY' },
    reasoningInOutput: false,
    callId: () => '',
  });
  const responseId = randomId(23);
  if (stream) return streamReply(answer, model, responseId, sse, s, picked);
  return {
    type: 'json',
    status: 200,
    headers: { 'content-type': 'application/json; charset=UTF-8', vary: 'Origin, X-Origin, Referer' },
    body: JSON.stringify(responseBody(answer, model, responseId)),
    opts: picked.opts,
    cut: s !== null && s.kind === 'cut',
  };
}

export const geminiProtocol: ProtocolImpl = { kind: 'gemini', basePath: '', handle };

export function startGeminiEmulator(opts?: StartOptions): Promise<Emulator> {
  return startServer(geminiProtocol, opts);
}

