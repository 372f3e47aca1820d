/**
 * provider_1: OpenAI Chat Completions, Responses (openai-responses.ts) and Embeddings.
 * Base URL `http://host:port/v1`; `POST /v1/chat/completions`, `POST /v1/responses`, `POST /v1/embeddings`, `Authorization: Bearer`.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { JSON_TYPE, jsonReply, maskKey, startServer, type Exchange, type Picked, type ProtocolImpl, type Reply } from './core.ts';
import { bearer, openAIScenarioError, openAIStyleHandler, type OpenAIDialect, type OpenAIErrorObject, type Rejection } from './openai-core.ts';
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { fineTuningRoutes, type FineTuningWire } from './openai-fine-tuning.ts';
import { responsesHandler } from './openai-responses.ts';
import type { Emulator, ScenarioUsage, StartOptions } from './types.ts';
import { float32Base64, isRecord, randomId, unitVector } from './util.ts';

const FINGERPRINT = 'fp_emu0openai';

function oe(message: string, type: string, param: string | null = null, code: string | null = null): OpenAIErrorObject {
  return { message, type, param, code };
}

function invalid(status: number, message: string, param: string | null, code: string | null): Rejection {
  return { status, error: oe(message, 'invalid_request_error', param, code) };
}

/** o-series and gpt-5 reasoning models (not the `-chat` variants). */
function isReasoningModel(model: string): boolean {
  return (/^o\d/.test(model) || /^gpt-5/.test(model)) && !model.includes('chat');
}

function responseHeaders(contentType: string): OutgoingHttpHeaders {
  return {
    'content-type': contentType,
    'x-request-id': `req_${randomId(32)}`,
    'openai-version': '2020-10-01',
    'openai-processing-ms': '7',
    'x-ratelimit-limit-requests': '10000',
    'x-ratelimit-remaining-requests': '9999',
    'x-ratelimit-reset-requests': '6ms',
    'x-ratelimit-limit-tokens': '10000000',
    'x-ratelimit-remaining-tokens': '9999000',
    'x-ratelimit-reset-tokens': '0s',
  };
}

export const openAIDialect: OpenAIDialect = {
  kind: 'openai',
  basePath: '/v1',
  chatPaths: new Set(['/v1/chat/completions']),
  embeddingsPath: '/v1/embeddings',
  roles: ['system', 'developer', 'user', 'assistant', 'tool', 'function'],
  completionId: () => `chatcmpl-${randomId(29)}`,
  callId: () => `call_${randomId(24)}`,
  extraFields: `"service_tier":"default","system_fingerprint":"${FINGERPRINT}",`,
  extraObject: { service_tier: 'default', system_fingerprint: FINGERPRINT },
  usagePlacement: 'separate',
  usage: (u: ScenarioUsage) => ({
    prompt_tokens: u.input,
    completion_tokens: u.output,
    total_tokens: u.input + u.output,
    prompt_tokens_details: { cached_tokens: u.cacheRead ?? 0, audio_tokens: 0, ...((u.cacheWrite ?? 0) > 0 ? { cache_write_tokens: u.cacheWrite } : {}) },
    completion_tokens_details: { reasoning_tokens: u.reasoning ?? 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  }),
  obfuscation: true,
  reasoningContent: false,
  keepAlive: false,
  namedToolChoiceStops: true,
  finishes: { stop: 'stop', tool: 'tool_calls', filter: 'content_filter', refusal: 'stop' },
  blockedContent: null,
  thinking: () => false,
  responseHeaders,
  auth(token, apiKey) {
    if (token === undefined || token === '') {
      return {
        status: 401,
        error: oe(
          "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.",
          'invalid_request_error',
        ),
      };
    }
    if (token !== apiKey) {
      return { status: 401, error: oe(`Incorrect API key provided: ${maskKey(token)}. You can find your API key at https://platform.openai.com/account/api-keys.`, 'invalid_request_error', null, 'invalid_api_key') };
    }
    return undefined;
  },
  errorFor(status, model) {
    switch (status) {
      case 400:
        return { error: oe('Invalid request (emulated).', 'invalid_request_error') };
      case 401:
        return { error: oe('Incorrect API key provided: sk-emu***0000. You can find your API key at https://platform.openai.com/account/api-keys.', 'invalid_request_error', null, 'invalid_api_key') };
      case 403:
        return { error: oe('Country, region, or territory not supported', 'request_forbidden', null, 'unsupported_country_region_territory') };
      case 404:
        return { error: oe(`The model \`${model}\` does not exist or you do not have access to it.`, 'invalid_request_error', null, 'model_not_found') };
      case 429:
        return {
          error: oe(`Rate limit reached for ${model} in organization org-emulator on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 1s. Visit https://platform.openai.com/account/rate-limits to learn more.`, 'requests', null, 'rate_limit_exceeded'),
          headers: { 'retry-after': '1', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1s' },
        };
      case 500:
        return { error: oe('The server had an error while processing your request. Sorry about that!', 'server_error') };
      case 503:
        return { error: oe('The server is overloaded or not ready yet.', 'server_error', null, 'server_is_overloaded') };
      default:
        return { error: oe(status >= 500 ? 'The server had an error while processing your request. Sorry about that!' : `Request failed with status ${status} (emulated).`, status >= 500 ? 'server_error' : 'invalid_request_error') };
    }
  },
  streamError: oe('The server had an error while processing your request. Sorry about that!', 'server_error'),
  invalidJson: oe(
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
    'invalid_request_error',
  ),
  notFound: (method, pathname) => oe(`Invalid URL (${method} ${pathname})`, 'invalid_request_error'),
  invalid: {
    missingModel: () => invalid(400, 'you must provide a model parameter', null, null),
    missingMessages: () => invalid(400, "Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter'),
    emptyMessages: () => invalid(400, "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages', 'empty_array'),
    badRole: (i, role) =>
      invalid(400, `Invalid value: '${String(role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`, `messages[${i}].role`, 'invalid_value'),
    generic: invalid,
  },
  extraChecks(body, info) {
    if (isReasoningModel(info.model)) {
      if (body.max_tokens !== undefined && body.max_tokens !== null) {
        return invalid(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", 'max_tokens', 'unsupported_parameter');
      }
      const t = body.temperature;
      if (typeof t === 'number' && t !== 1 && body.reasoning_effort !== 'none') {
        return invalid(400, `Unsupported value: 'temperature' does not support ${t} with this model. Only the default (1) value is supported.`, 'temperature', 'unsupported_value');
      }
    }
    const rf = body.response_format;
    if (isRecord(rf) && rf.type === 'json_schema') {
      if (!isRecord(rf.json_schema)) return invalid(400, "Missing required parameter: 'response_format.json_schema'.", 'response_format.json_schema', 'missing_required_parameter');
      if (typeof rf.json_schema.name !== 'string') return invalid(400, "Missing required parameter: 'response_format.json_schema.name'.", 'response_format.json_schema.name', 'missing_required_parameter');
    }
    return undefined;
  },
};

// ---------------------------------------------------------------------------
// Embeddings

const EMBEDDING_DIMS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};
/** providers.md §1: ≤ 2048 inputs, ≤ 8192 tokens each, ≤ 300k tokens per request. */
const EMBEDDING_MAX_INPUTS = 2048;
const EMBEDDING_MAX_INPUT_TOKENS = 8192;
const EMBEDDING_MAX_REQUEST_TOKENS = 300_000;

function embeddings(ex: Exchange, body: Record<string, unknown>, take: () => Picked): Reply {
  const headers = responseHeaders(JSON_TYPE);
  const fail = (message: string, param: string | null = null, code: string | null = null): Reply =>
    jsonReply(400, { error: oe(message, 'invalid_request_error', param, code) }, headers);
  const model = body.model;
  if (typeof model !== 'string' || model === '') return fail('you must provide a model parameter');
  const input = body.input;
  if (input === undefined || input === null) return fail("'input' is a required property");
  const invalidInput = "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.";

  // Normalise to seeds (text or token lists) and count each input's tokens (cl100k_base, as OpenAI bills these models).
  const seeds: string[] = [];
  const counts: number[] = [];
  const text = (item: string) => {
    seeds.push(item);
    counts.push(countTokens(item));
  };
  const ids = (item: number[]) => {
    seeds.push(item.join(','));
    counts.push(item.length);
  };
  if (typeof input === 'string') {
    if (input === '') return fail(invalidInput);
    text(input);
  } else if (Array.isArray(input)) {
    if (input.length === 0 || input.length > EMBEDDING_MAX_INPUTS) return fail(invalidInput);
    if (input.every((x) => typeof x === 'number')) {
      ids(input as number[]);
    } else {
      for (const item of input) {
        if (typeof item === 'string') {
          if (item === '') return fail(invalidInput);
          text(item);
        } else if (Array.isArray(item) && item.length > 0 && item.every((x) => typeof x === 'number')) {
          ids(item as number[]);
        } else {
          return fail(invalidInput);
        }
      }
    }
  } else {
    return fail(invalidInput);
  }
  const longest = Math.max(...counts);
  if (longest > EMBEDDING_MAX_INPUT_TOKENS) {
    return fail(`This model's maximum context length is ${EMBEDDING_MAX_INPUT_TOKENS} tokens, however you requested ${longest} tokens (${longest} in your prompt; 0 for the completion). Please reduce your prompt; or completion length.`);
  }
  const tokens = counts.reduce((a, b) => a + b, 0);
  if (tokens > EMBEDDING_MAX_REQUEST_TOKENS) {
    return fail(`Requested ${tokens} tokens, max ${EMBEDDING_MAX_REQUEST_TOKENS} tokens per request`, null, 'max_tokens_per_request');
  }

  const native = EMBEDDING_DIMS[model] ?? 1536;
  const requested = body.dimensions;
  if (requested !== undefined && requested !== null) {
    if (!model.startsWith('text-embedding-3')) return fail('This model does not support specifying dimensions.', 'dimensions');
    if (typeof requested !== 'number' || !Number.isInteger(requested) || requested < 1) return fail(`Invalid value for 'dimensions' = ${String(requested)}. Must be at least 1.`, 'dimensions', 'invalid_value');
    if (requested > native) return fail(`Invalid value for 'dimensions' = ${requested}. Must be less than or equal to ${native}.`, 'dimensions', 'invalid_value');
  }
  const format = body.encoding_format ?? 'float';
  if (format !== 'float' && format !== 'base64') return fail(`Invalid value: '${String(format)}'. Supported values are: 'float' and 'base64'.`, 'encoding_format', 'invalid_value');

  const picked = take();
  const s = picked.scenario;
  if (s !== null) {
    if (s.kind === 'hang') return { type: 'hang' };
    if (s.kind === 'error') return openAIScenarioError(openAIDialect, s, model, picked);
  }
  const scripted = s !== null && s.kind === 'embedding' ? s : undefined;
  const dims = scripted?.dimensions ?? (typeof requested === 'number' ? requested : native);
  const data = seeds.slice(0, scripted?.vectors ?? seeds.length).map((seed, index) => {
    const v = unitVector(seed, dims);
    return { object: 'embedding', index, embedding: format === 'base64' ? float32Base64(v) : v };
  });
  const reported = scripted?.usage ?? tokens;
  const out: Record<string, unknown> = { object: 'list', data, model };
  if (reported !== 'none') out.usage = { prompt_tokens: reported, total_tokens: reported };
  return { ...jsonReply(200, out, headers, picked.opts), cut: s !== null && s.kind === 'cut' };
}

const fineTuningWire: FineTuningWire = {
  scenarioError: (s, model, picked) => openAIScenarioError(openAIDialect, s, model, picked),
  invalid: (status, message, param, code) => jsonReply(status, { error: oe(message, 'invalid_request_error', param, code) }, responseHeaders(JSON_TYPE)),
  ok: (body) => jsonReply(200, body, responseHeaders(JSON_TYPE)),
};

/** A fresh protocol per server: its uploaded files and fine-tuning jobs are its own. */
export function openAIProtocol(): ProtocolImpl {
  const chat = openAIStyleHandler(openAIDialect, embeddings);
  const fineTuning = fineTuningRoutes(fineTuningWire);
  const responses = responsesHandler(openAIDialect);
  return {
    kind: 'openai',
    basePath: '/v1',
    handle(ex) {
      if (ex.pathname === '/v1/responses') return responses(ex);
      if (ex.pathname === '/v1/files' || ex.pathname.startsWith('/v1/fine_tuning/')) {
        const denied = openAIDialect.auth(bearer(ex), ex.apiKey);
        if (denied !== undefined) return jsonReply(denied.status, { error: denied.error }, responseHeaders(JSON_TYPE));
        const reply = fineTuning(ex);
        if (reply !== undefined) return reply;
      }
      return chat(ex);
    },
  };
}

export function startOpenAIEmulator(opts?: StartOptions): Promise<Emulator> {
  return startServer(openAIProtocol(), opts);
}
