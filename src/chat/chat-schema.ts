/**
 * The accepted shape of a chat request body as one zod schema. The route checks every body
 * against it (`checkChatShape`, called by parseChatRequest after its own field checks, which
 * give the spec's messages), and the OpenAPI document is generated from it, so the document
 * cannot call a body valid that the route refuses, or the other way round
 * (chat-schema.test.ts generates bodies to hold both to that).
 *
 * Unknown fields are accepted (and dropped by the route); `null` is accepted for every
 * optional field; the spec's rejected list appears as fields that only take `null` (or the
 * one supported value). Content parts are only shape-checked: whether the model's provider
 * can take them is decided later (400 unsupported_content).
 */
import { z } from 'zod';
import { GatewayError } from '../shared/errors.ts';
import { isPlainChatBody } from './plain-chat-body.ts';

/** Any integer JavaScript can hold (as the route reads them), published as JSON Schema `integer`. */
const integer = () => z.number().refine(Number.isInteger, { message: 'must be an integer' }).meta({ type: 'integer' });
const functionName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, '1–64 letters, digits, underscores or dashes');
const jsonObject = z.record(z.string(), z.unknown());

/** A prompt-cache breakpoint, as the openai SDK's and LiteLLM's users send it for Anthropic models. */
const cacheControl = z.strictObject({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() }).nullish()
  .describe('A prompt-cache breakpoint: provider_2 caches the prompt up to here (ttl 5m by default, or 1h); other providers cache by themselves and drop it quietly.');
const textPart = z.looseObject({ type: z.literal('text'), text: z.string(), cache_control: cacheControl });
const refusalPart = z.looseObject({ type: z.literal('refusal'), refusal: z.string(), cache_control: cacheControl });
/** system, developer, tool and assistant content: a string or text parts (joined). */
const textContent = z.union([z.string(), z.array(z.union([textPart, refusalPart]))]);

const imagePart = z.looseObject({
  type: z.literal('image_url'),
  cache_control: cacheControl,
  image_url: z.union([z.string(), z.looseObject({ url: z.string(), detail: z.string().optional() })]),
}).describe('An https URL or a base64 data URL (PNG, JPEG, GIF, WebP); which ones a provider takes: see the docs.');
const filePart = z.looseObject({
  type: z.literal('file'),
  cache_control: cacheControl,
  file: z.looseObject({ file_data: z.string().describe('An inline PDF as a data URL.') }),
}).describe('An inline PDF (`file.file_data`); `file_id` is refused with 400 unsupported_content.');
const otherPart = z.looseObject({ type: z.string().refine((t) => t !== 'text', { message: "a text part needs a string 'text'" }).meta({ not: { const: 'text' } }), cache_control: cacheControl })
  .describe('Any other part type is checked against the model (400 unsupported_content when the provider cannot take it).');
const userPart = z.union([textPart, imagePart, filePart, otherPart]);

const toolCall = z.looseObject({
  id: z.string(),
  function: z.looseObject({ name: z.string(), arguments: z.unknown().describe('JSON text of the arguments.') }),
});

const message = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content: textContent, cache_control: cacheControl }),
  z.looseObject({ role: z.literal('developer'), content: textContent, cache_control: cacheControl }).describe('Sent as `system` where the provider has no developer role.'),
  z.looseObject({ role: z.literal('user'), content: z.union([z.string(), z.array(userPart).min(1)]), name: z.unknown().optional(), cache_control: cacheControl }),
  z.looseObject({
    role: z.literal('assistant'),
    cache_control: cacheControl,
    content: textContent.nullish(),
    tool_calls: z.array(toolCall).nullish(),
    refusal: z.unknown().optional().describe('Echoed refusal text; accepted and not forwarded.'),
    reasoning_content: z.unknown().optional(),
  }).superRefine((m, ctx) => {
    const hasCalls = Array.isArray(m.tool_calls) && m.tool_calls.length > 0;
    if ((m.content === null || m.content === undefined) && !hasCalls && (m.refusal === null || m.refusal === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['content'], message: 'An assistant message needs content or tool_calls.' });
    }
  }).meta({
    // The refinement above, in JSON Schema: content, a non-empty tool_calls, or a refusal.
    anyOf: [
      { required: ['content'], properties: { content: { not: { type: 'null' } } } },
      { required: ['tool_calls'], properties: { tool_calls: { type: 'array', minItems: 1 } } },
      { required: ['refusal'], properties: { refusal: { not: { type: 'null' } } } },
    ],
  }).describe('An earlier answer; content may be null when it carries tool_calls. Echoed fields such as refusal and annotations are accepted.'),
  z.looseObject({ role: z.literal('tool'), content: textContent, tool_call_id: z.string().min(1), cache_control: cacheControl }),
]).describe("Roles system, developer, user, assistant, tool. The deprecated 'function' role is refused (400 invalid_request).");

const tool = z.looseObject({
  type: z.literal('function'),
  cache_control: cacheControl,
  function: z.looseObject({
    name: functionName,
    description: z.string().nullish(),
    parameters: jsonObject.nullish().describe('A JSON schema object.'),
    strict: z.boolean().nullish(),
  }),
});

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string() }) }),
]);

const responseFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    json_schema: z.looseObject({
      name: functionName,
      schema: jsonObject.nullish(),
      strict: z.boolean().nullish(),
      description: z.string().nullish(),
    }),
  }),
]);

const notSupported = (what: string) => z.null().optional().describe(`${what} Only null is accepted; anything else is 400 invalid_request.`);

export const chatRequestSchema = z.looseObject({
  model: z.string().min(1).describe('A chat model slug; a provider model id also resolves.'),
  messages: z.array(message).min(1).max(5000),
  max_tokens: integer().min(1).nullish().describe('Output cap. Default 4096; the provider receives min(max_tokens or 4096, model limit).'),
  max_completion_tokens: integer().min(1).nullish().describe('Alias of max_tokens; wins when both are set.'),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(16)]).nullish().describe('At most 16 entries; empty strings are removed.'),
  seed: integer().min(Number.MIN_SAFE_INTEGER).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  logit_bias: z.record(z.string().regex(/^\d+$/), z.number().min(-100).max(100)).nullish().describe('Token id → bias from -100 to 100.'),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  tools: z.array(tool).max(512).nullish(),
  tool_choice: toolChoice.nullish().describe("A named function must be in tools. Ignored (and named in X-Service-Ignored-Params) without tools."),
  parallel_tool_calls: z.boolean().nullish(),
  response_format: responseFormat.nullish(),
  user: z.string().max(512).nullish(),
  reasoning_effort: z.string().nullish(),
  verbosity: z.string().nullish(),
  models: z.array(z.string().min(1)).max(8).nullish().describe('Fallback models (slugs), tried in order after `model` when it cannot run or its attempts fail; the answer names the model that answered in `system_fingerprint` and is billed at its prices.'),
  n: z.literal(1).nullish().describe('Only one choice per request.'),
  logprobs: z.literal(false).nullish().describe('Log probabilities are not supported.'),
  top_logprobs: notSupported('Log probabilities are not supported.'),
  audio: notSupported('Audio output is not supported.'),
  modalities: z.array(z.literal('text')).nullish().describe("Only 'text'."),
  functions: notSupported("The deprecated 'functions' field; use tools."),
  function_call: notSupported("The deprecated 'function_call' field; use tool_choice."),
  web_search_options: notSupported('Web search is not supported.'),
}).superRefine((body, ctx) => {
  const choice = body.tool_choice;
  if (Array.isArray(body.tools) && body.tools.length > 0 && typeof choice === 'object' && choice !== null) {
    if (!body.tools.some((t) => t.function.name === choice.function.name)) {
      ctx.addIssue({ code: 'custom', path: ['tool_choice'], message: `tool_choice names the function '${choice.function.name}', which is not in 'tools'.` });
    }
  }
}).describe('Unknown top-level fields are accepted and dropped; their names are listed in X-Service-Ignored-Params. null is accepted for every optional field.');

/** 400 invalid_request naming the first field the schema refuses. */
export function checkChatShape(body: unknown): void {
  // The common body is judged in one cheap pass; zod parses the rest (and words every error).
  if (isPlainChatBody(body)) return;
  const result = chatRequestSchema.safeParse(body);
  if (result.success) return;
  const issue = result.error.issues[0];
  const param = paramOf(issue?.path ?? []);
  throw new GatewayError('invalid_request', `'${param}': ${issue?.message ?? 'invalid'}.`, { param });
}

/** ['messages', 1, 'content'] → messages[1].content */
function paramOf(path: PropertyKey[]): string {
  let param = '';
  for (const part of path) param += typeof part === 'number' ? `[${part}]` : `${param === '' ? '' : '.'}${String(part)}`;
  return param === '' ? 'body' : param;
}
