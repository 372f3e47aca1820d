/**
 * The common chat body in one cheap pass: plain-string messages and scalar options, each
 * inside the range chat-schema.ts gives it. A body this accepts is one the zod schema
 * accepts too (plain-chat-body.test.ts holds the two to that), so checkChatShape can skip
 * the full parse; anything else (content parts, tools, response formats, odd values) still
 * goes through zod, which alone words the error a client sees.
 */
type Json = Record<string, unknown>;

const MAX_MESSAGES = 5000;
const MAX_STOP = 16;
const MAX_USER = 512;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const inRange = (v: unknown, min: number, max: number) => typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max;
const integerFrom = (v: unknown, min: number) => typeof v === 'number' && Number.isInteger(v) && v >= min;

/** Fields whose value this pass judges; `null` (or absent) is fine for every one but model and messages. */
const SCALARS: Record<string, (v: unknown) => boolean> = {
  max_tokens: (v) => integerFrom(v, 1),
  max_completion_tokens: (v) => integerFrom(v, 1),
  temperature: (v) => inRange(v, 0, 2),
  top_p: (v) => inRange(v, 0, 1),
  frequency_penalty: (v) => inRange(v, -2, 2),
  presence_penalty: (v) => inRange(v, -2, 2),
  seed: (v) => integerFrom(v, Number.MIN_SAFE_INTEGER),
  stream: (v) => typeof v === 'boolean',
  parallel_tool_calls: (v) => typeof v === 'boolean',
  stream_options: (v) => isObject(v) && (v.include_usage === undefined || v.include_usage === null || typeof v.include_usage === 'boolean'),
  stop: (v) => typeof v === 'string' || (Array.isArray(v) && v.length <= MAX_STOP && v.every((s) => typeof s === 'string')),
  user: (v) => typeof v === 'string' && v.length <= MAX_USER,
  reasoning_effort: (v) => typeof v === 'string',
  verbosity: (v) => typeof v === 'string',
  n: (v) => v === 1,
  logprobs: (v) => v === false,
};

/** Fields of the schema this pass leaves to zod unless they are null or absent. */
const LEFT_TO_ZOD = new Set([
  'logit_bias', 'tools', 'tool_choice', 'response_format', 'modalities', 'models',
  'top_logprobs', 'audio', 'functions', 'function_call', 'web_search_options',
]);

function plainMessage(m: unknown): boolean {
  if (!isObject(m) || typeof m.content !== 'string') return false;
  switch (m.role) {
    case 'system':
    case 'developer':
    case 'user':
      return true;
    case 'assistant':
      return m.tool_calls === undefined || m.tool_calls === null;
    case 'tool':
      return typeof m.tool_call_id === 'string' && m.tool_call_id !== '';
    default:
      return false;
  }
}

/** True only for a body the chat schema accepts; false means "ask zod", not "invalid". */
export function isPlainChatBody(body: unknown): boolean {
  if (!isObject(body)) return false;
  if (typeof body.model !== 'string' || body.model === '') return false;
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0 || messages.length > MAX_MESSAGES) return false;
  for (const m of messages) if (!plainMessage(m)) return false;
  for (const key in body) {
    if (key === 'model' || key === 'messages') continue;
    const v = body[key];
    if (v === undefined || v === null) continue;
    const check = Object.hasOwn(SCALARS, key) ? SCALARS[key] : undefined;
    if (check !== undefined) {
      if (!check(v)) return false;
    } else if (LEFT_TO_ZOD.has(key)) {
      return false;
    }
  }
  return true;
}
