/**
 * The four chat providers as rows of one table: which fixture model, which emulator,
 * how each reads what it received (in its own wire format, normalised for one
 * assertion), and every place where a behaviour legitimately differs by provider.
 * Used by test/providers-table.test.ts (and the trap and client tests).
 */
import type { Emulator, Scenario, ScenarioUsage } from '../../emulators/types.ts';
import type { ChatHarness } from './chat.ts';
import { sseEvents } from './chat.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- upstream bodies are inspected freely
export type Wire = any;

export type Finish = 'stop' | 'length' | 'tool_calls' | 'content_filter';
export type ToolChoiceForm = 'none' | 'auto' | 'required' | 'named';

/** A tool the tests declare, and the named choice that points at it. */
export const WEATHER_TOOL = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } },
};
export const TIME_TOOL = {
  type: 'function',
  function: { name: 'get_time', description: 'Local time', parameters: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'], additionalProperties: false } },
};
export const TOOL_CHOICES: Record<ToolChoiceForm, unknown> = {
  none: 'none',
  auto: 'auto',
  required: 'required',
  named: { type: 'function', function: { name: 'get_weather' } },
};

/** What an upstream body holds, the same shape for every protocol. */
export interface ToolHistory {
  /** Calls of the assistant turn, in order. `id` is undefined where the protocol matches by name (provider_3). */
  calls: { id: string | undefined; name: string; args: unknown }[];
  /** Tool results, in order. `name` is set where the protocol matches by name. */
  results: { id: string | undefined; name: string | undefined; content: unknown }[];
}

export interface ToolChoiceRow {
  model: string;
  form: ToolChoiceForm;
  /** The provider's tool-choice field as received (undefined: not sent). */
  sent: unknown;
  /** Set when the forced choice travels as an instruction in the system text. */
  instruction?: RegExp;
}

export type FinishRow = [upstream: string, ours: Finish | { error: 'upstream_error' }];
/** `refusesKey`: the provider refuses the gateway's key: the key then rests 5 minutes (tested on a gateway of its own). */
export type ErrorRow = { status: number; body?: unknown; ours: number; code: string; message?: RegExp; refusesKey?: true };

export interface ProviderRow {
  provider: 'provider_1' | 'provider_2' | 'provider_3' | 'provider_7';
  /** The main fixture model of this provider. */
  model: string;
  emulator(h: ChatHarness): Emulator;
  /** Every system text the provider received (system/developer messages, the system field, systemInstruction), joined. */
  system(body: Wire): string;
  /** The tool-choice field as received. */
  toolChoiceOf(body: Wire): unknown;
  toolChoices: ToolChoiceRow[];
  /** message.content of a tool-call answer with no text (provider_7 passes DeepSeek's `""` through; the others say null). */
  toolCallContent: null | '';
  /** The tool names declared. */
  toolNames(body: Wire): string[];
  /** `parallel_tool_calls: false` as received, or 'ignored' (dropped and named in the header: the spec's D). */
  parallelFalse: ((body: Wire) => unknown) | 'ignored';
  parallelFalseSent?: unknown;
  history(body: Wire): ToolHistory;
  /** What a tool result `21C` looks like at the provider. */
  resultOf21C: unknown;
  /** How json_object reaches the provider: the native switch as received, and whether an instruction is added. */
  jsonObject: { native(body: Wire): unknown; expected: unknown; instruction: boolean };
  /** json_schema: the model that enforces schemas natively (and the schema as received), and one that takes it as an instruction. */
  jsonSchemaNative?: { model: string; schemaOf(body: Wire): unknown; expected(schema: Record<string, unknown>): unknown };
  jsonSchemaInstruction?: { model: string };
  /** The model whose S parameters the forwarding row uses, and each forwarded parameter's value as received (provider field names). */
  forwardModel: string;
  forwarded: Record<string, (body: Wire) => unknown>;
  /** Dropped on `model` (D, or S the model does not take), each read where the provider would have it. */
  dropped: Record<string, (body: Wire) => unknown>;
  textFinishes: FinishRow[];
  /** A tool-call answer's own finish value. */
  toolFinish: string;
  /** A named tool_choice answer's finish_reason (provider_1 passes OpenAI's `stop` quirk through). */
  namedFinish: Finish;
  /** The fixture models have no cache prices: cached tokens are billed at the input price, and shown in the details. */
  usage: { scenario: ScenarioUsage; prompt: number; completion: number; details: Record<string, unknown> };
  errors: ErrorRow[];
}

const systemMessages = (body: Wire) =>
  (body.messages as Wire[]).filter((m) => m.role === 'system' || m.role === 'developer').map((m) => m.content).join('\n\n');

const openAiHistory = (body: Wire): ToolHistory => ({
  calls: (body.messages as Wire[]).flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []) : [])).map((c: Wire) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) })),
  results: (body.messages as Wire[]).filter((m) => m.role === 'tool').map((m) => ({ id: m.tool_call_id, name: undefined, content: m.content })),
});

const openAiErrors: ErrorRow[] = [
  { status: 400, ours: 400, code: 'provider_rejected_request' },
  { status: 401, ours: 503, code: 'model_unavailable', refusesKey: true },
  { status: 403, ours: 503, code: 'model_unavailable', refusesKey: true },
  { status: 404, ours: 503, code: 'model_unavailable' },
  { status: 429, ours: 429, code: 'upstream_rate_limited' },
  { status: 500, ours: 502, code: 'upstream_error' },
  { status: 503, ours: 502, code: 'upstream_error' },
];

const anthropicSystem = (body: Wire): string =>
  typeof body.system === 'string' ? body.system : Array.isArray(body.system) ? body.system.map((b: Wire) => b.text).join('\n\n') : '';

export const PROVIDERS: ProviderRow[] = [
  {
    provider: 'provider_1',
    model: 'gpt-test',
    toolCallContent: null,
    emulator: (h) => h.openai,
    system: systemMessages,
    toolChoiceOf: (b) => b.tool_choice,
    toolChoices: [
      { model: 'gpt-test', form: 'none', sent: 'none' },
      { model: 'gpt-test', form: 'auto', sent: 'auto' },
      { model: 'gpt-test', form: 'required', sent: 'required' },
      { model: 'gpt-test', form: 'named', sent: { type: 'function', function: { name: 'get_weather' } } },
    ],
    toolNames: (b) => (b.tools as Wire[]).map((t) => t.function.name),
    parallelFalse: (b) => b.parallel_tool_calls,
    parallelFalseSent: false,
    history: openAiHistory,
    resultOf21C: '21C',
    // OpenAI refuses json_object unless a message mentions JSON: the instruction is added too.
    jsonObject: { native: (b) => b.response_format, expected: { type: 'json_object' }, instruction: true },
    jsonSchemaNative: { model: 'gpt-test', schemaOf: (b) => b.response_format?.json_schema?.schema, expected: (s) => s },
    forwardModel: 'gpt-test',
    forwarded: {
      temperature: (b) => b.temperature, top_p: (b) => b.top_p, seed: (b) => b.seed, frequency_penalty: (b) => b.frequency_penalty,
      presence_penalty: (b) => b.presence_penalty, logit_bias: (b) => b.logit_bias, user: (b) => b.user, stop: (b) => b.stop, max_tokens: (b) => b.max_tokens,
    },
    dropped: { reasoning_effort: (b) => b.reasoning_effort, verbosity: (b) => b.verbosity },
    textFinishes: [['stop', 'stop'], ['length', 'length'], ['content_filter', 'content_filter']],
    toolFinish: 'tool_calls',
    namedFinish: 'stop',
    usage: { scenario: { input: 100, output: 20, cacheRead: 30, reasoning: 5 }, prompt: 100, completion: 20, details: { prompt_tokens_details: { cached_tokens: 30 }, completion_tokens_details: { reasoning_tokens: 5 } } },
    errors: openAiErrors,
  },
  {
    provider: 'provider_7',
    model: 'deepseek-test',
    toolCallContent: '',
    emulator: (h) => h.deepseek,
    system: systemMessages,
    toolChoiceOf: (b) => b.tool_choice,
    toolChoices: [
      { model: 'deepseek-test', form: 'none', sent: 'none' },
      { model: 'deepseek-test', form: 'auto', sent: 'auto' },
      { model: 'deepseek-test', form: 'required', sent: 'required' },
      { model: 'deepseek-test', form: 'named', sent: { type: 'function', function: { name: 'get_weather' } } },
    ],
    toolNames: (b) => (b.tools as Wire[]).map((t) => t.function.name),
    parallelFalse: 'ignored',
    history: openAiHistory,
    resultOf21C: '21C',
    // No native schemas: json_object mode plus the request as an instruction.
    jsonObject: { native: (b) => b.response_format, expected: { type: 'json_object' }, instruction: true },
    jsonSchemaInstruction: { model: 'deepseek-test' },
    forwardModel: 'deepseek-test',
    forwarded: {
      temperature: (b) => b.temperature, top_p: (b) => b.top_p, frequency_penalty: (b) => b.frequency_penalty,
      presence_penalty: (b) => b.presence_penalty, stop: (b) => b.stop, max_tokens: (b) => b.max_tokens,
    },
    dropped: { seed: (b) => b.seed, logit_bias: (b) => b.logit_bias, user: (b) => b.user, reasoning_effort: (b) => b.reasoning_effort, verbosity: (b) => b.verbosity },
    textFinishes: [['stop', 'stop'], ['length', 'length'], ['content_filter', 'content_filter'], ['insufficient_system_resource', { error: 'upstream_error' }]],
    toolFinish: 'tool_calls',
    namedFinish: 'tool_calls',
    usage: { scenario: { input: 100, output: 20, cacheRead: 30, reasoning: 5 }, prompt: 100, completion: 20, details: { prompt_tokens_details: { cached_tokens: 30 }, completion_tokens_details: { reasoning_tokens: 5 } } },
    errors: [...openAiErrors, { status: 402, ours: 503, code: 'model_unavailable' }, { status: 422, ours: 400, code: 'provider_rejected_request' }],
  },
  {
    provider: 'provider_2',
    model: 'claude-test',
    toolCallContent: null,
    emulator: (h) => h.anthropic,
    system: anthropicSystem,
    toolChoiceOf: (b) => b.tool_choice,
    toolChoices: [
      // claude-test (forced_tool_choice: instruction): a forced choice is `auto` plus an instruction.
      { model: 'claude-test', form: 'none', sent: { type: 'none' } },
      { model: 'claude-test', form: 'auto', sent: { type: 'auto' } },
      { model: 'claude-test', form: 'required', sent: { type: 'auto' }, instruction: /must call at least one of the provided tools/ },
      { model: 'claude-test', form: 'named', sent: { type: 'auto' }, instruction: /must call the tool "get_weather"/ },
      // claude-legacy (forced_tool_choice: native): any / tool.
      { model: 'claude-legacy', form: 'required', sent: { type: 'any' } },
      { model: 'claude-legacy', form: 'named', sent: { type: 'tool', name: 'get_weather' } },
    ],
    toolNames: (b) => (b.tools as Wire[]).map((t) => t.name),
    parallelFalse: (b) => b.tool_choice,
    parallelFalseSent: { type: 'auto', disable_parallel_tool_use: true },
    history: (b) => ({
      calls: (b.messages as Wire[]).filter((m) => m.role === 'assistant').flatMap((m) => m.content.filter((x: Wire) => x.type === 'tool_use')).map((x: Wire) => ({ id: x.id, name: x.name, args: x.input })),
      results: (b.messages as Wire[]).filter((m) => m.role === 'user' && Array.isArray(m.content)).flatMap((m) => m.content.filter((x: Wire) => x.type === 'tool_result')).map((x: Wire) => ({ id: x.tool_use_id, name: undefined, content: x.content })),
    }),
    resultOf21C: '21C',
    // No JSON-object mode at Anthropic: an instruction only.
    jsonObject: { native: (b) => b.output_config, expected: undefined, instruction: true },
    jsonSchemaNative: { model: 'claude-test', schemaOf: (b) => b.output_config?.format?.schema, expected: (s) => s },
    jsonSchemaInstruction: { model: 'claude-legacy' },
    forwardModel: 'claude-legacy',
    forwarded: { temperature: (b) => b.temperature, top_p: (b) => b.top_p, stop: (b) => b.stop_sequences, max_tokens: (b) => b.max_tokens },
    dropped: {
      // S parameters claude-test does not take, then the D ones.
      temperature: (b) => b.temperature, top_p: (b) => b.top_p, seed: (b) => b.seed, frequency_penalty: (b) => b.frequency_penalty,
      presence_penalty: (b) => b.presence_penalty, logit_bias: (b) => b.logit_bias, user: (b) => b.metadata, reasoning_effort: (b) => b.output_config, verbosity: (b) => b.verbosity,
    },
    textFinishes: [
      ['end_turn', 'stop'], ['stop_sequence', 'stop'], ['pause_turn', 'stop'], ['max_tokens', 'length'],
      ['model_context_window_exceeded', 'length'], ['refusal', 'content_filter'],
    ],
    toolFinish: 'tool_use',
    namedFinish: 'tool_calls',
    // input_tokens excludes cache reads and writes: prompt = 100 + 30 + 10.
    usage: { scenario: { input: 100, output: 20, cacheRead: 30, cacheWrite: 10 }, prompt: 140, completion: 20, details: { prompt_tokens_details: { cached_tokens: 30, cache_write_tokens: 10 } } },
    errors: [
      { status: 400, ours: 400, code: 'provider_rejected_request', message: /Invalid request \(emulated\)/ },
      { status: 401, ours: 503, code: 'model_unavailable', refusesKey: true },
      { status: 402, ours: 503, code: 'model_unavailable' },
      { status: 403, ours: 503, code: 'model_unavailable', refusesKey: true },
      { status: 404, ours: 503, code: 'model_unavailable' },
      { status: 413, ours: 400, code: 'provider_rejected_request', message: /maximum allowed number of bytes/ },
      { status: 429, ours: 429, code: 'upstream_rate_limited' },
      { status: 500, ours: 502, code: 'upstream_error' },
      { status: 504, ours: 502, code: 'upstream_error' },
      { status: 529, ours: 502, code: 'upstream_error' },
    ],
  },
  {
    provider: 'provider_3',
    model: 'gemini-test',
    toolCallContent: null,
    emulator: (h) => h.gemini,
    system: (b) => (b.systemInstruction?.parts ?? []).map((p: Wire) => p.text).join('\n\n'),
    toolChoiceOf: (b) => b.toolConfig?.functionCallingConfig,
    toolChoices: [
      { model: 'gemini-test', form: 'none', sent: { mode: 'NONE' } },
      { model: 'gemini-test', form: 'auto', sent: { mode: 'AUTO' } },
      { model: 'gemini-test', form: 'required', sent: { mode: 'ANY' } },
      { model: 'gemini-test', form: 'named', sent: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
    ],
    toolNames: (b) => (b.tools as Wire[]).flatMap((t) => t.functionDeclarations.map((d: Wire) => d.name)),
    parallelFalse: 'ignored',
    // Gemini matches results to calls by function name; it has no call ids.
    history: (b) => ({
      calls: (b.contents as Wire[]).filter((c) => c.role === 'model').flatMap((c) => c.parts.filter((p: Wire) => p.functionCall !== undefined)).map((p: Wire) => ({ id: undefined, name: p.functionCall.name, args: p.functionCall.args })),
      results: (b.contents as Wire[]).filter((c) => c.role === 'user').flatMap((c) => c.parts.filter((p: Wire) => p.functionResponse !== undefined)).map((p: Wire) => ({ id: undefined, name: p.functionResponse.name, content: p.functionResponse.response })),
    }),
    resultOf21C: { result: '21C' },
    jsonObject: { native: (b) => b.generationConfig?.responseMimeType, expected: 'application/json', instruction: false },
    jsonSchemaNative: {
      model: 'gemini-test',
      schemaOf: (b) => b.generationConfig?.responseJsonSchema,
      // Gemini's dialect: additionalProperties is dropped (see json-schema.ts).
      expected: (s) => JSON.parse(JSON.stringify(s, (k, v) => (k === 'additionalProperties' ? undefined : v))),
    },
    forwardModel: 'gemini-test',
    forwarded: {
      temperature: (b) => b.generationConfig.temperature, top_p: (b) => b.generationConfig.topP, seed: (b) => b.generationConfig.seed,
      frequency_penalty: (b) => b.generationConfig.frequencyPenalty, presence_penalty: (b) => b.generationConfig.presencePenalty,
      stop: (b) => b.generationConfig.stopSequences, max_tokens: (b) => b.generationConfig.maxOutputTokens,
    },
    dropped: { logit_bias: (b) => b.generationConfig.logitBias, user: (b) => b.labels, reasoning_effort: (b) => b.generationConfig.thinkingConfig?.thinkingLevel, verbosity: (b) => b.verbosity },
    textFinishes: [
      ['STOP', 'stop'], ['FINISH_REASON_UNSPECIFIED', 'stop'], ['OTHER', 'stop'], ['MAX_TOKENS', 'length'],
      ['SAFETY', 'content_filter'], ['PROHIBITED_CONTENT', 'content_filter'], ['BLOCKLIST', 'content_filter'], ['SPII', 'content_filter'],
      ['IMAGE_SAFETY', 'content_filter'], ['IMAGE_PROHIBITED_CONTENT', 'content_filter'], ['LANGUAGE', 'content_filter'],
      // RECITATION is filtered, not a clean stop (docs/decisions.md); image-output reasons follow their text counterparts.
      ['RECITATION', 'content_filter'], ['IMAGE_RECITATION', 'content_filter'], ['NO_IMAGE', 'stop'], ['IMAGE_OTHER', 'stop'],
      // The model failed to produce a usable call: a provider failure, refunded (docs/decisions.md).
      ['MALFORMED_FUNCTION_CALL', { error: 'upstream_error' }], ['UNEXPECTED_TOOL_CALL', { error: 'upstream_error' }], ['TOO_MANY_TOOL_CALLS', { error: 'upstream_error' }],
    ],
    toolFinish: 'STOP',
    namedFinish: 'tool_calls',
    // promptTokenCount already includes the 30 cached tokens; thoughts are counted apart and billed as output.
    usage: { scenario: { input: 100, output: 20, cacheRead: 30, reasoning: 5 }, prompt: 100, completion: 25, details: { prompt_tokens_details: { cached_tokens: 30 }, completion_tokens_details: { reasoning_tokens: 5 } } },
    errors: [
      { status: 400, ours: 400, code: 'provider_rejected_request', message: /Request contains an invalid argument/ },
      {
        status: 400,
        body: { error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }] } },
        ours: 503,
        code: 'model_unavailable',
        refusesKey: true,
      },
      { status: 403, ours: 503, code: 'model_unavailable', refusesKey: true },
      { status: 404, ours: 503, code: 'model_unavailable' },
      { status: 429, ours: 429, code: 'upstream_rate_limited' },
      { status: 500, ours: 502, code: 'upstream_error' },
      { status: 503, ours: 502, code: 'upstream_error' },
      { status: 504, ours: 502, code: 'upstream_error' },
    ],
  },
];

/** The last body an emulator received. */
export function lastBody(e: Emulator): Wire {
  return e.requests[e.requests.length - 1]?.body;
}

export interface Assembled {
  content: string;
  reasoning: string;
  refusal: string;
  calls: { index: number; id: string; name: string; args: string }[];
  finish: string | null;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; prompt_tokens_details?: unknown; completion_tokens_details?: unknown } | undefined;
  error: { code: string; message: string } | undefined;
  done: boolean;
  /** Each tool-call delta in arrival order (for checking that indexes never mix). */
  toolDeltas: { index: number; id?: string; args?: string }[];
}

/** Reassembles a chat-completions event stream the way a client does. */
export function assemble(text: string): Assembled {
  const out: Assembled = { content: '', reasoning: '', refusal: '', calls: [], finish: null, usage: undefined, error: undefined, done: false, toolDeltas: [] };
  for (const event of sseEvents(text)) {
    if (event === ':') continue;
    if (event === '[DONE]') {
      out.done = true;
      continue;
    }
    const chunk = JSON.parse(event);
    if (chunk.error !== undefined) {
      out.error = chunk.error;
      continue;
    }
    if (chunk.usage) out.usage = chunk.usage;
    const choice = chunk.choices[0];
    if (choice === undefined) continue;
    const delta = choice.delta;
    out.content += delta.content ?? '';
    out.reasoning += delta.reasoning_content ?? '';
    out.refusal += delta.refusal ?? '';
    for (const call of delta.tool_calls ?? []) {
      out.toolDeltas.push({ index: call.index, id: call.id, args: call.function?.arguments });
      let slot = out.calls.find((c) => c.index === call.index);
      if (slot === undefined) {
        slot = { index: call.index, id: call.id, name: call.function?.name, args: '' };
        out.calls.push(slot);
      }
      slot.args += call.function?.arguments ?? '';
    }
    if (choice.finish_reason !== null) out.finish = choice.finish_reason;
  }
  return out;
}

/** A scenario that answers `text` with a given upstream finish value. */
export function textScenario(text: string, finish?: string, usage?: ScenarioUsage): Scenario {
  return { kind: 'text', text, chunks: 4, ...(finish === undefined ? {} : { finish }), ...(usage === undefined ? {} : { usage }) };
}
