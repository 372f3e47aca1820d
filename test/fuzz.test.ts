/**
 * The fuzz suite (issue 10): property-based, seeded and bounded, over every route that
 * exists. Each route is one row of ROUTES (docs/fuzzing.md says how a new route joins).
 * For every generated request (hostile bodies, headers, framing and methods, see
 * helpers/fuzz.ts and helpers/fuzz-values.ts):
 * - an answer arrives within 10 s, and it is never a 5xx (but a route's designed 501);
 * - every error is the error object, with `param` on chat;
 * - no answer shows a stack trace or a secret (provider API keys, the admin token, keys);
 * - the ledger moves only for a run that really happened, and bills only one whose answer was sent.
 * FUZZ_SEED replays a run; FUZZ_RUNS multiplies the case counts; FUZZ_SHRINK=1 shrinks a failure.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startEmulator } from '../emulators/index.ts';
import type { Emulator, EmulatorKind } from '../emulators/types.ts';
import { writeCatalog } from './fixtures/catalog.ts';
import { chatCatalog } from './helpers/chat.ts';
import { fuzzRoute, type FuzzContext, type FuzzRoute, type RouteCase } from './helpers/fuzz.ts';
import type { RawAnswer } from './helpers/raw-http.ts';
import { bodyText, chatBodyValue, hostileKey, hostileNumber, hostileString, hostileValue, objectOf } from './helpers/fuzz-values.ts';
import { ADMIN_TOKEN, startGateway, type TestGateway } from './helpers/gateway.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const SCALE = Number(process.env.FUZZ_RUNS ?? 1);
const SHRINK = process.env.FUZZ_SHRINK === '1';
const BODY_LIMIT_BYTES = 512 * 1024;

// ---------------------------------------------------------------------------------------
// Building blocks of the rows

/** Percent-encodes every byte outside the unreserved set (lone surrogates included, as U+FFFD). */
function pct(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** A path segment: mostly one of `valid`, else anything, encoded or (rarely) raw. */
function segment(valid: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...valid) },
    { weight: 2, arbitrary: hostileString.map(pct) },
    { weight: 1, arbitrary: fc.constantFrom('%E0%A4%A', '%00', '%', '%2F', 'a%2Fb', '..', '.', '%2e%2e', 'x'.repeat(5000), '00000000-0000-0000-0000-000000000000') },
    { weight: 1, arbitrary: hostileString },
  );
}

/** A query string from [name, value] pairs, encoded, sometimes raw. */
function query(names: string[], value: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const pair = fc.tuple(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: hostileKey }), value);
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant('') },
    { weight: 6, arbitrary: fc.array(pair, { minLength: 1, maxLength: 4 }).map((pairs) => `?${pairs.map(([k, v]) => `${pct(k)}=${pct(v)}`).join('&')}`) },
    { weight: 1, arbitrary: fc.array(pair, { minLength: 1, maxLength: 2 }).map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`) },
    { weight: 1, arbitrary: fc.constantFrom('?', '?&&', '?=', '?limit', '?limit=1&limit=2', '?a[b]=1', '?__proto__[x]=1', '?constructor=1', `?limit=${'9'.repeat(400)}`) },
  );
}

/** A JSON object body of these fields, each present or not, valid or hostile, plus unknown fields. */
function jsonBody(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<string> {
  const entries = Object.entries(fields).map(([name, valid]) =>
    fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 4, arbitrary: valid.map((v) => [name, v] as [string, unknown]) }, { weight: 1, arbitrary: hostileValue.map((v) => [name, v] as [string, unknown]) }),
  );
  const value = fc
    .tuple(fc.tuple(...entries), fc.oneof(fc.constant([] as [string, unknown][]), fc.array(fc.tuple(hostileKey, hostileValue), { maxLength: 2 })))
    .map(([known, extra]) => objectOf([...known.filter((e): e is [string, unknown] => e !== undefined), ...extra]));
  return bodyText(value);
}

function post(path: fc.Arbitrary<string>, body: fc.Arbitrary<string>, method = 'POST'): fc.Arbitrary<RouteCase> {
  return fc.tuple(path, body).map(([p, b]) => ({ method, path: p, body: b }));
}

function get(path: fc.Arbitrary<string>): fc.Arbitrary<RouteCase> {
  return path.map((p) => ({ method: 'GET', path: p }));
}

const credits = fc.oneof(fc.constantFrom(0, 0.000001, 1, 12.5, 1e12, 1e13), hostileNumber);
const scopes = fc.array(fc.oneof(fc.constantFrom('read', 'chat', 'images', 'video', 'audio', 'embeddings', 'jobs', 'fine_tuning', 'all'), hostileString), { maxLength: 4 });
const addresses = fc.array(fc.oneof(fc.constantFrom('10.0.0.0/8', '::1', '1.2.3.4', '2001:db8::/129', '300.1.1.1', '10.0.0.0/33', ''), hostileString), { maxLength: 4 });

/** A complete chat answer: the completion object, or a stream that ends with [DONE] and carries no error event. */
function chatAnswered(answer: RawAnswer): boolean {
  if (answer.status !== 200) return false;
  if ((answer.headers['content-type'] ?? '').startsWith('text/event-stream')) return !/^data: \{"error"/m.test(answer.body) && answer.body.trimEnd().endsWith('data: [DONE]');
  try {
    return (JSON.parse(answer.body) as { object?: unknown }).object === 'chat.completion';
  } catch {
    return false;
  }
}

/** A complete Messages answer: the message object, or a stream that ends with message_stop and carries no error event. */
function messagesAnswered(answer: RawAnswer): boolean {
  if (answer.status !== 200) return false;
  if ((answer.headers['content-type'] ?? '').startsWith('text/event-stream')) return !/^event: error$/m.test(answer.body) && /event: message_stop\ndata: [^\n]*\n\n$/.test(answer.body);
  try {
    return (JSON.parse(answer.body) as { type?: unknown }).type === 'message';
  } catch {
    return false;
  }
}

const block = fc.oneof(
  fc.record({ type: fc.constant('text'), text: fc.oneof(fc.string(), hostileValue) }),
  fc.record({ type: fc.constant('image'), source: fc.oneof(fc.constant({ type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' }), fc.constant({ type: 'url', url: 'http://x/y.png' }), hostileValue) }),
  fc.record({ type: fc.constant('document'), source: fc.oneof(fc.constant({ type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }), hostileValue) }),
  fc.record({ type: fc.constant('tool_use'), id: fc.constantFrom('toolu_1', ''), name: fc.constantFrom('f', ''), input: fc.oneof(fc.constant({}), hostileValue) }),
  fc.record({ type: fc.constant('tool_result'), tool_use_id: fc.constantFrom('toolu_1', 'other'), content: fc.oneof(fc.string(), fc.array(hostileValue, { maxLength: 2 }), hostileValue), is_error: fc.boolean() }),
  fc.record({ type: fc.constant('thinking'), thinking: fc.string(), signature: fc.string() }),
  fc.record({ type: fc.oneof(fc.constantFrom('server_tool_use', 'search_result', 'redacted_thinking'), hostileString) }),
  fc.record({ type: fc.constant('text'), text: fc.string(), cache_control: fc.oneof(fc.constant({ type: 'ephemeral', ttl: '1h' }), hostileValue) }),
);
const turn = fc.record({
  role: fc.oneof({ weight: 8, arbitrary: fc.constant('user') }, { weight: 2, arbitrary: fc.constantFrom('assistant', 'system') }, { weight: 1, arbitrary: hostileString }),
  content: fc.oneof({ weight: 6, arbitrary: fc.string({ minLength: 1 }) }, { weight: 3, arbitrary: fc.array(block, { minLength: 1, maxLength: 3 }) }, { weight: 1, arbitrary: hostileValue }),
});
const messagesBody = jsonBody({
  model: fc.constantFrom('claude-test', 'gpt-test', 'gemini-test', 'deepseek-test', 'pic-1', 'nope'),
  max_tokens: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 70_000 }) }, { weight: 1, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: hostileNumber }),
  messages: fc.oneof({ weight: 3, arbitrary: fc.array(turn, { minLength: 1, maxLength: 1 }) }, { weight: 1, arbitrary: fc.array(turn, { minLength: 1, maxLength: 3 }) }),
  system: fc.oneof(fc.string(), fc.array(block, { maxLength: 2 })),
  stream: fc.boolean(),
  tools: fc.array(fc.record({ name: fc.constantFrom('f', 'f', 'f', 'bad name'), input_schema: fc.constant({ type: 'object' }), type: fc.constantFrom('custom', 'custom', 'custom', 'web_search_20250305') }, { requiredKeys: ['name', 'input_schema'] }), { maxLength: 2 }),
  tool_choice: fc.oneof(fc.constant({ type: 'auto' }), fc.constant({ type: 'any' }), hostileValue),
  thinking: fc.oneof(fc.constant({ type: 'adaptive' }), fc.constant({ type: 'enabled', budget_tokens: 2048 }), hostileValue),
  temperature: fc.oneof({ weight: 4, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }) }, { weight: 1, arbitrary: hostileNumber }),
  models: fc.array(fc.constantFrom('gpt-test', 'nope'), { maxLength: 2 }),
});

// ---------------------------------------------------------------------------------------
// The routes: one row each

/** Routes behind a key, fuzzed with any body. */
const KEYED: [method: 'GET' | 'POST', path: string, id: boolean][] = [
  ['POST', '/api/v1/embeddings', false],
  ['POST', '/api/v1/images/generations', false],
  ['POST', '/api/v1/videos/generations', false],
  ['POST', '/api/v1/audio/speech', false],
  ['POST', '/api/v1/audio/transcriptions', false],
  ['POST', '/api/v1/audio/uploads', false],
  ['GET', '/api/v1/jobs/{id}', true],
  ['POST', '/api/v1/fine_tuning/jobs', false],
  ['GET', '/api/v1/fine_tuning/jobs', false],
  ['GET', '/api/v1/fine_tuning/jobs/{id}', true],
  ['POST', '/api/v1/fine_tuning/jobs/{id}/cancel', true],
  ['GET', '/api/v1/fine_tuning/jobs/{id}/events', true],
  ['GET', '/api/v1/fine_tuning/jobs/{id}/checkpoints', true],
];

const anyRequestBody = jsonBody({ model: fc.constantFrom('text-embedding-3-small', 'pic-1', 'gpt-test'), input: hostileValue, prompt: fc.string(), n: fc.integer({ min: 0, max: 11 }), training_file: fc.constant('data:application/jsonl;base64,e30=') });

const ROUTES: FuzzRoute[] = [
  {
    route: 'POST /api/v1/chat/completions',
    cases: () =>
      fc.tuple(post(fc.oneof({ weight: 9, arbitrary: fc.constant('/api/v1/chat/completions') }, { weight: 1, arbitrary: fc.constantFrom('/api/v1/chat/completions/', '/api/v1/chat/completions?stream=true', '/api/v1/chat/completions#x') }), bodyText(chatBodyValue)), fc.oneof({ weight: 30, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom('/api/v1//chat/completions', '/api/v1/chat/completion', '/api/v2/chat/completions', '/API/V1/CHAT/COMPLETIONS') }))
        .map(([routeCase, elsewhere]) => (elsewhere === undefined ? routeCase : { ...routeCase, path: elsewhere, offRoute: true })),
    auth: 'key',
    errorParam: true,
    money: 'paid',
    paid: { jobHeader: 'x-service-job-id', answered: chatAnswered },
    // The catalog's own state: an unpriced, removed or duplicate model (spec: 503, nothing charged).
    designedServerErrors: { model_unavailable: 503 },
    runs: 400,
  },
  {
    route: 'POST /api/v1/messages',
    cases: () => post(fc.constantFrom('/api/v1/messages', '/api/v1/messages?beta=true'), messagesBody),
    auth: 'key',
    errorParam: false,
    errorEnvelope: 'anthropic',
    money: 'paid',
    paid: { jobHeader: 'x-service-job-id', answered: messagesAnswered },
    designedServerErrors: { model_unavailable: 503 },
    runs: 150,
  },
  {
    route: 'POST /api/v1/messages/count_tokens',
    cases: () => post(fc.constant('/api/v1/messages/count_tokens'), messagesBody),
    auth: 'key',
    errorParam: false,
    errorEnvelope: 'anthropic',
    money: 'free',
    designedServerErrors: { model_unavailable: 503 },
    runs: 60,
  },
  {
    route: 'GET /api/v1/models',
    cases: () => get(query(['category', 'provider', 'featured', 'include_unavailable', 'limit', 'offset'], fc.oneof(fc.constantFrom('text', 'image', 'provider_1', 'custom', 'true', 'false', '0', '1', '500', '501', '-1', '1.5', ''), hostileString)).map((q) => `/api/v1/models${q}`)),
    auth: 'public',
    errorParam: true,
    money: 'free',
    runs: 80,
  },
  {
    route: 'GET /api/v1/models/{slug}',
    cases: () => get(fc.tuple(segment(['gpt-test', 'gpt-test-2026-01-01', 'pic-1', 'gpt-gone', 'nope', 'a%2Fb']), fc.oneof(fc.constant(''), fc.constantFrom('/extra', '/', '/x/y'))).map(([s, rest]) => `/api/v1/models/${s}${rest}`)),
    auth: 'public',
    errorParam: true,
    money: 'free',
    runs: 80,
  },
  {
    route: 'GET /api/v1/audio/uploads/{id}/{secret}',
    cases: () => get(fc.tuple(segment(['00000000-0000-4000-8000-000000000000']), segment(['A'.repeat(43), 'secret'])).map(([id, secret]) => `/api/v1/audio/uploads/${id}/${secret}`)),
    auth: 'public',
    errorParam: false,
    money: 'free',
    runs: 30,
  },
  ...KEYED.map(([method, path, id]): FuzzRoute => ({
    route: `${method} ${path}`,
    cases: () => {
      const url = id ? segment(['00000000-0000-0000-0000-000000000000', 'job_1']).map((s) => path.replace('{id}', s)) : fc.constant(path);
      return method === 'POST' ? post(url, anyRequestBody) : get(url);
    },
    auth: 'key',
    errorParam: false,
    money: 'free',
    // The media hosts have no key here: their models cannot run (the catalog says so too).
    designedServerErrors: { model_unavailable: 503 },
    runs: 15,
  })),
  {
    route: 'POST /admin/v1/accounts',
    cases: () => post(fc.constant('/admin/v1/accounts'), jsonBody({ name: fc.string(), email: fc.constantFrom('a@b.example', 'not-an-email'), created_at: fc.constantFrom('2026-01-01T00:00:00Z', '2026-13-01T00:00:00Z', 'yesterday'), has_purchase: fc.boolean(), billing_emails: fc.boolean() })),
    auth: 'admin',
    errorParam: false,
    money: 'admin',
    runs: 30,
  },
  {
    route: 'GET /admin/v1/accounts/{id}',
    cases: (ctx) => get(segment([ctx.sandbox.accountId]).map((id) => `/admin/v1/accounts/${id}`)),
    auth: 'admin',
    errorParam: false,
    money: 'admin',
    runs: 20,
  },
  {
    route: 'PATCH /admin/v1/accounts/{id}',
    cases: (ctx) => post(segment([ctx.sandbox.accountId]).map((id) => `/admin/v1/accounts/${id}`), jsonBody({ monthly_spending_limit_credits: fc.oneof(fc.constant(null), credits), billing_emails: fc.boolean() }), 'PATCH'),
    auth: 'admin',
    errorParam: false,
    money: 'admin',
    runs: 20,
  },
  {
    route: 'POST /admin/v1/accounts/{id}/credits',
    cases: (ctx) => post(segment([ctx.sandbox.accountId]).map((id) => `/admin/v1/accounts/${id}/credits`), jsonBody({ credits, purchase: fc.boolean() })),
    auth: 'admin',
    errorParam: false,
    money: 'admin',
    runs: 30,
  },
  {
    route: 'POST /admin/v1/accounts/{id}/keys',
    cases: (ctx) =>
      post(
        segment([ctx.sandbox.accountId]).map((id) => `/admin/v1/accounts/${id}/keys`),
        jsonBody({ name: fc.string(), scopes, requests_per_minute: fc.oneof(fc.constantFrom(59, 60, 6000, 6001), hostileNumber), ip_allowlist: addresses, daily_limit_credits: credits, monthly_limit_credits: credits, expires: fc.constantFrom('never', '30d', '90d', '1y', '2099-01-01', '2000-01-01', '2026-02-30', 'soon'), warning_threshold: fc.oneof(fc.constantFrom(0, 0.8, 1, 1.01, -0.1), hostileNumber), email_alerts: fc.boolean() }),
      ),
    auth: 'admin',
    errorParam: false,
    money: 'admin',
    runs: 30,
  },
  {
    route: 'GET /admin/v1/accounts/{id}/keys',
    cases: (ctx) => get(segment([ctx.sandbox.accountId]).map((id) => `/admin/v1/accounts/${id}/keys`)),
    auth: 'admin',
    errorParam: false,
    money: 'admin',
    runs: 15,
  },
  {
    route: 'PATCH /admin/v1/keys/{key_id}',
    cases: (ctx) => post(segment([ctx.sandbox.keyId]).map((id) => `/admin/v1/keys/${id}`), jsonBody({ name: fc.string(), daily_limit_credits: fc.oneof(fc.constant(null), credits), monthly_limit_credits: credits, warning_threshold: hostileNumber, email_alerts: fc.boolean(), scopes }), 'PATCH'),
    auth: 'admin',
    errorParam: false,
    money: 'admin',
    runs: 20,
  },
  ...(['revoke', 'rotate'] as const).map((action): FuzzRoute => ({
    route: `POST /admin/v1/keys/{key_id}/${action}`,
    cases: (ctx) => post(segment([ctx.sandbox.keyId]).map((id) => `/admin/v1/keys/${id}/${action}`), fc.oneof(fc.constant(''), bodyText(hostileValue))),
    auth: 'admin',
    errorParam: false,
    money: 'admin',
    runs: 15,
  })),
  {
    route: 'GET /admin/v1/keys/{key_id}/usage',
    cases: (ctx) => get(segment([ctx.sandbox.keyId]).map((id) => `/admin/v1/keys/${id}/usage`)),
    auth: 'admin',
    errorParam: false,
    money: 'admin',
    runs: 15,
  },
  {
    route: 'GET /admin/v1/accounts/{id}/ledger',
    cases: (ctx) => get(fc.tuple(segment([ctx.sandbox.accountId]), query(['limit'], fc.oneof(fc.constantFrom('all', '1', '0', '-1', '1.5', '1e3', ''), hostileString))).map(([id, q]) => `/admin/v1/accounts/${id}/ledger${q}`)),
    auth: 'admin',
    errorParam: false,
    money: 'admin',
    runs: 20,
  },
  {
    route: 'GET /admin/v1/accounts/{id}/notifications',
    cases: (ctx) => get(segment([ctx.sandbox.accountId]).map((id) => `/admin/v1/accounts/${id}/notifications`)),
    auth: 'admin',
    errorParam: false,
    money: 'admin',
    runs: 10,
  },
  {
    route: 'GET /admin/v1/stats',
    cases: () => get(query(['reset'], fc.oneof(fc.constantFrom('true', 'false'), hostileString)).map((q) => `/admin/v1/stats${q}`)),
    auth: 'admin',
    errorParam: false,
    money: 'admin',
    runs: 10,
  },
];

// ---------------------------------------------------------------------------------------

const KINDS: [EmulatorKind, string][] = [['openai', '1'], ['deepseek', '7'], ['anthropic', '2'], ['gemini', '3']];
let gw: TestGateway;
let emulators: Emulator[] = [];
let ctx: FuzzContext;
let cases = 0;

beforeAll(async () => {
  const env: Record<string, string> = { CATALOG_FILE: writeCatalog(chatCatalog()), TRUST_PROXY: '127.0.0.1,::1', BODY_LIMIT_BYTES: String(BODY_LIMIT_BYTES) };
  const providerKeys: string[] = [];
  for (const [kind, n] of KINDS) {
    const apiKey = `provider-${n}-secret-${Math.random().toString(36).slice(2)}`;
    const emulator = await startEmulator(kind, { apiKey, record: false });
    emulators.push(emulator);
    providerKeys.push(apiKey);
    env[`PROVIDER_${n}_BASE_URL`] = emulator.baseUrl;
    env[`PROVIDER_${n}_API_KEY`] = apiKey;
  }
  gw = await startGateway(env);
  const paying = await gw.account({ credits: 1_000_000, key: { scopes: ['all'], requests_per_minute: 6000 } });
  const allowlisted = await gw.admin('POST', `/admin/v1/accounts/${paying.accountId}/keys`, { name: 'allowlisted', requests_per_minute: 6000, ip_allowlist: ['10.0.0.0/8', '2001:db8::/32'] });
  const bystander = await gw.account({ credits: 10, key: { scopes: ['read'] } });
  const sandbox = await gw.account({ credits: 5 });
  ctx = {
    port: Number(new URL(gw.url).port),
    store: gw.gateway.store,
    bodyLimitBytes: BODY_LIMIT_BYTES,
    adminToken: ADMIN_TOKEN,
    paying: { accountId: paying.accountId, key: paying.key, allowlistedKey: allowlisted.json.key as string },
    bystander: { accountId: bystander.accountId, key: bystander.key },
    sandbox: { accountId: sandbox.accountId, keyId: sandbox.keyId },
    secrets: [...providerKeys, ADMIN_TOKEN, paying.key, allowlisted.json.key as string, bystander.key, sandbox.key],
  };
});

afterAll(async () => {
  console.log(`[fuzz] ${cases} cases in all over ${ROUTES.length} routes, FUZZ_SEED=${SEED}${SCALE === 1 ? '' : ` FUZZ_RUNS=${SCALE}`}`);
  await gw?.close();
  for (const emulator of emulators) await emulator.close();
  emulators = [];
});

describe('fuzz: hostile requests on every route', () => {
  ROUTES.forEach((row, i) => {
    const runs = Math.max(1, Math.round(row.runs * SCALE));
    it(`${row.route}: ${runs} cases, never a 5xx or a hang, always the error object${row.errorParam ? ' with param' : ''}, no secret, ${row.money === 'paid' ? 'billed only with an answer' : 'no money moved'}`, async () => {
      const seed = SEED + i;
      console.log(`[fuzz] ${row.route}: seed ${seed}, ${runs} cases`);
      const result = await fuzzRoute({ ...row, runs }, ctx, seed, SHRINK);
      cases += result.cases;
      const answers = [...result.answers].sort((a, b) => b[1] - a[1]).map(([label, n]) => `${label} ×${n}`);
      console.log(`[fuzz] ${row.route}: answered ${answers.join(', ')}`);
    }, 120_000 * Math.max(1, SCALE));
  });
});
