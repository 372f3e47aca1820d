/**
 * The fuzz suite's runner (test/fuzz.test.ts, docs/fuzzing.md): each route is one row of
 * a table; the runner adds hostile headers (Authorization, X-Forwarded-For, content
 * types, odd and malformed header lines), oversized bodies and wrong methods to the
 * row's own requests, sends them over raw HTTP, and checks the properties every answer
 * of the gateway has.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { LedgerEntry, Store } from '../../src/store/types.ts';
import { hostileString } from './fuzz-values.ts';
import { rawExchange, type RawAnswer, type RawRequest } from './raw-http.ts';

/** Every request is answered within this bound, or the case fails. */
export const ANSWER_WITHIN_MS = 10_000;

export interface FuzzContext {
  port: number;
  store: Store;
  bodyLimitBytes: number;
  adminToken: string;
  /** The paying account: `key` has every scope; `allowlistedKey` only answers for 10.0.0.0/8 and 2001:db8::/32 (TRUST_PROXY is loopback). */
  paying: { accountId: string; key: string; allowlistedKey: string };
  /** Another account whose key (scope read) is sent now and then; its ledger never moves. */
  bystander: { accountId: string; key: string };
  /** The only account admin rows act on. */
  sandbox: { accountId: string; keyId: string };
  /** Must never appear in any answer: provider API keys, the admin token, every client key. */
  secrets: string[];
}

/** What a row generates: the rest of the request (credentials, hostile headers, framing) comes from the runner. */
export interface RouteCase {
  method: string;
  /** Path and query, already encoded (or deliberately not). */
  path: string;
  /** JSON or not; undefined: no body. */
  body?: string;
  /** The path is deliberately not the route's (an unknown path): errors need no `param`. */
  offRoute?: boolean;
}

export interface FuzzRoute {
  /** Method and path as the spec writes them. */
  route: string;
  cases(ctx: FuzzContext): fc.Arbitrary<RouteCase>;
  /** The credential the route takes: the runner sends it on most cases and a broken one on the rest. */
  auth: 'key' | 'admin' | 'public';
  /** Chat-format routes: every error names `param` (the field at fault, or null). */
  errorParam: boolean;
  /** 'anthropic': the route's errors are `{type: "error", error: {…}}` (the Messages route); the server's own before routing stay `{error}`. */
  errorEnvelope?: 'anthropic';
  /**
   * Money: `paid` routes bill only a run whose answer was sent (then `paid` says how to
   * read the answer); `free` ones never touch a ledger; `admin` keeps the sandbox ledger consistent.
   */
  money: 'paid' | 'free' | 'admin';
  paid?: {
    /** The header naming the answer's job (its ledger rows carry that job id). */
    jobHeader: string;
    /** Whether the answer is a complete, successful one (then the run is settled; otherwise refunded or never held). */
    answered(answer: RawAnswer): boolean;
  };
  /** 5xx answers this route gives by design, code → status (503 model_unavailable for a model the catalog cannot run). */
  designedServerErrors?: Readonly<Record<string, number>>;
  runs: number;
}

// ---------------------------------------------------------------------------------------
// Headers the runner adds

const hex64 = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 });

function brokenCredential(ctx: FuzzContext): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    fc.constant(undefined),
    fc.constantFrom('', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', `bearer ${ctx.paying.key}`, `Bearer ${ctx.paying.key} extra`, `Bearer  ${ctx.paying.key}`, `Bearer ${ctx.paying.key.toUpperCase()}`, `Bearer ${ctx.paying.key.slice(0, -1)}`, `Bearer ${ctx.adminToken}`, `Bearer ${'x'.repeat(8000)}`, `Token ${ctx.paying.key}`),
    hex64.map((hex) => `Bearer svc_live_${hex}`),
    hostileString.map((s) => `Bearer ${s}`),
    hostileString,
  );
}

function credential(row: FuzzRoute, ctx: FuzzContext): fc.Arbitrary<string | undefined> {
  const broken = { weight: 2, arbitrary: brokenCredential(ctx) };
  switch (row.auth) {
    case 'key':
      return fc.oneof(
        { weight: 12, arbitrary: fc.constant(`Bearer ${ctx.paying.key}`) },
        { weight: 2, arbitrary: fc.constant(`Bearer ${ctx.paying.allowlistedKey}`) },
        { weight: 1, arbitrary: fc.constant(`Bearer ${ctx.bystander.key}`) },
        broken,
      );
    case 'admin':
      return fc.oneof({ weight: 12, arbitrary: fc.constant(`Bearer ${ctx.adminToken}`) }, { weight: 1, arbitrary: fc.constant(`Bearer ${ctx.paying.key}`) }, broken);
    case 'public':
      return fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 3, arbitrary: fc.constant(`Bearer ${ctx.paying.key}`) }, { weight: 1, arbitrary: fc.constant(`Bearer ${ctx.bystander.key}`) }, broken);
  }
}

const forwardedFor = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.constantFrom('10.1.2.3', '10.1.2.3, 127.0.0.1', '1.2.3.4', '1.2.3.4, 10.0.0.9', '2001:db8::1', '::ffff:10.0.0.1', 'unknown', '', ',,,', ' , ', '10.1.2.3:8080', '[2001:db8::1]', '999.1.1.1', '10.1.2.3 10.1.2.4', '1.1.1.1, '.repeat(500)) },
  { weight: 1, arbitrary: hostileString },
);

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  { weight: 3, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'APPLICATION/JSON', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=xyz', 'application/json; charset=utf-16', 'application/json; charset=latin1', '', ';', 'application/', '*/*', 'application/json, text/plain', 'application/json; boundary', 'application/json\u00ff', 'application/octet-stream') },
  { weight: 1, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

const extraHeaderName = fc.oneof(
  fc.constantFrom('x-real-ip', 'forwarded', 'content-encoding', 'accept', 'accept-encoding', 'accept-charset', 'if-none-match', 'origin', 'cookie', 'expect', 'x-request-id', 'x-service-job-id', 'x-http-method-override', 'range', 'authorization', 'content-type', 'x-forwarded-for', 'x-forwarded-proto', 'te', 'upgrade', 'user-agent'),
  fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
);

/** Header values may hold any character except line breaks (those are the malformed-syntax cases below). */
const headerValue = fc.oneof(fc.constantFrom('100-continue', 'gzip', 'deflate', '*', 'bytes=0-1', 'h2c', '"abc"', 'https://evil.example'), hostileString).map((v) => v.replace(/[\r\n]/g, ' '));

/** Header lines the HTTP parser refuses before any route is known. */
const malformedLines = fc.constantFrom(
  ['x-nul: a\u0000b'],
  ['x-cr: a\rb'],
  ['x-folded: a', '  continued'],
  [`x-big: ${'a'.repeat(20_000)}`],
  ['bad name: x'],
  ['x\u00ff: y'],
  [': empty-name'],
  ['content-length: abc'],
  ['content-length: -1'],
  ['content-length: 1, 2'],
);

const otherMethod = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'get');

interface Variation {
  credential: string | undefined;
  forwardedFor: string | undefined;
  contentType: string | undefined;
  extra: [string, string][];
  malformed: readonly string[] | undefined;
  method: string | undefined;
  framing: 'length' | 'chunked' | 'oversized-length' | 'oversized-chunked';
}

function variation(row: FuzzRoute, ctx: FuzzContext): fc.Arbitrary<Variation> {
  return fc.record({
    credential: credential(row, ctx),
    forwardedFor,
    contentType,
    extra: fc.oneof({ weight: 4, arbitrary: fc.constant([] as [string, string][]) }, { weight: 1, arbitrary: fc.array(fc.tuple(extraHeaderName, headerValue), { minLength: 1, maxLength: 2 }) }),
    malformed: fc.oneof({ weight: 20, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: malformedLines }),
    method: fc.oneof({ weight: 25, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: otherMethod }),
    framing: fc.oneof({ weight: 20, arbitrary: fc.constant('length' as const) }, { weight: 3, arbitrary: fc.constant('chunked' as const) }, { weight: 1, arbitrary: fc.constantFrom('oversized-length' as const, 'oversized-chunked' as const) }),
  });
}

function buildRequest(routeCase: RouteCase, v: Variation, ctx: FuzzContext): RawRequest {
  const headers: [string, string][] = [];
  if (v.credential !== undefined) headers.push(['authorization', v.credential.replace(/[\r\n]/g, ' ')]);
  if (v.forwardedFor !== undefined) headers.push(['x-forwarded-for', v.forwardedFor.replace(/[\r\n]/g, ' ')]);
  let body: string | Buffer | undefined = routeCase.body;
  if (body !== undefined && v.contentType !== undefined) headers.push(['content-type', v.contentType.replace(/[\r\n]/g, ' ')]);
  headers.push(...v.extra);
  let chunked = v.framing === 'chunked';
  if (body !== undefined && v.framing.startsWith('oversized')) {
    body = Buffer.alloc(ctx.bodyLimitBytes + 1 + (body.length % 1000), 'a');
    chunked = v.framing === 'oversized-chunked';
  }
  const request: RawRequest = { method: v.method ?? routeCase.method, path: routeCase.path, headers, chunked };
  if (body !== undefined) request.body = body;
  if (v.malformed !== undefined) request.rawLines = v.malformed;
  return request;
}

// ---------------------------------------------------------------------------------------
// Properties

class PropertyBroken extends Error {}

const STACK_TRACE = /\n\s+at \S+ \(|\.ts:\d+:\d+|node_modules|node:internal/;
const ERROR_FIELDS = new Set(['message', 'type', 'code', 'param', 'details']);

interface LedgerState {
  paying: LedgerEntry[];
  bystander: number;
}

async function ledgerState(ctx: FuzzContext): Promise<LedgerState> {
  return {
    paying: await ctx.store.accounts.listLedger(ctx.paying.accountId, Number.MAX_SAFE_INTEGER),
    bystander: (await ctx.store.accounts.listLedger(ctx.bystander.accountId, Number.MAX_SAFE_INTEGER)).length,
  };
}

/** Balance equals Σ top-ups and grants − Σ settlements, and nothing is left held. */
async function balanced(ctx: FuzzContext, accountId: string): Promise<string | undefined> {
  const account = await ctx.store.accounts.getAccount(accountId);
  const ledger = await ctx.store.accounts.listLedger(accountId, Number.MAX_SAFE_INTEGER);
  const sum = ledger.reduce((s, e) => s + (e.kind === 'topup' || e.kind === 'grant' ? e.amount : e.kind === 'settle' ? -e.amount : 0), 0);
  if (account === undefined) return `account ${accountId} is gone`;
  if (account.held !== 0) return `${account.held} micro-credits are still held after the answer`;
  if (account.balance !== sum) return `balance ${account.balance} differs from the ledger's ${sum}`;
  return undefined;
}

function check(ok: unknown, why: string): asserts ok {
  if (!ok) throw new PropertyBroken(why);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are inspected freely
function jsonOf(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function checkAnswer(row: FuzzRoute, request: RawRequest, routeCase: RouteCase, answer: RawAnswer, before: LedgerState, ctx: FuzzContext): Promise<void> {
  const json = jsonOf(answer.body);
  const code: unknown = json?.error?.code;
  // Never a 5xx (but the ones the route answers by design; a HEAD answer has no body to name its code).
  const designed = Object.entries(row.designedServerErrors ?? {});
  const byDesign = designed.some(([c, status]) => status === answer.status && (c === code || request.method === 'HEAD'));
  check(answer.status < 500 || byDesign, `answered ${answer.status}${typeof code === 'string' ? ` ${code}` : ''}`);
  check(!STACK_TRACE.test(answer.raw), 'the answer shows a stack trace or a source path');
  for (const secret of ctx.secrets) check(!answer.raw.includes(secret), `the answer shows a secret (${secret.slice(0, 12)}…)`);

  const hasBody = request.method !== 'HEAD' && answer.status !== 304 && answer.status !== 204;
  if (answer.status >= 400 && hasBody) {
    check(json !== undefined && typeof json === 'object' && json !== null, `an error answer that is not JSON: ${answer.body.slice(0, 200)}`);
    const enveloped = row.errorEnvelope === 'anthropic' && Object.keys(json).length === 2 && json.type === 'error';
    check((enveloped || Object.keys(json).length === 1) && typeof json.error === 'object' && json.error !== null, 'an error answer that is not {error:{…}}');
    check(typeof json.error.message === 'string' && typeof json.error.type === 'string' && typeof json.error.code === 'string', 'error.message, type and code must be strings');
    for (const field of Object.keys(json.error)) check(ERROR_FIELDS.has(field), `unexpected error field '${field}'`);
    // Chat errors name the field at fault (or null), also before routing (param null); not the router's own
    // 404/405 for another path or method.
    if (row.errorParam && request.method === routeCase.method && routeCase.offRoute !== true && code !== 'not_found' && code !== 'method_not_allowed') check('param' in json.error && (json.error.param === null || typeof json.error.param === 'string'), 'a chat error without param');
  }

  if (row.money === 'paid') {
    if (row.paid === undefined) throw new Error(`${row.route}: a paid row needs 'paid'`);
    const after = await ledgerState(ctx);
    const added = after.paying.slice(0, after.paying.length - before.paying.length);
    const jobHeader = answer.headers[row.paid.jobHeader];
    const completed = row.paid.answered(answer);
    if (added.length === 0) {
      check(!completed, 'a completed answer with no hold and settlement in the ledger');
    } else {
      const kinds = added.map((e) => e.kind).reverse().join(',');
      const job = added[0]?.jobId;
      check(added.length === 2 && added.every((e) => e.jobId === job), `ledger rows of more than one run: ${kinds}`);
      check(jobHeader === job, `the ledger's job ${job} is not the answer's ${row.paid.jobHeader} ${jobHeader}`);
      if (completed) check(kinds === 'hold,settle', `a completed answer whose run is ${kinds}`);
      else check(kinds === 'hold,refund', `an answer that did not complete (status ${answer.status}) whose run is ${kinds}`);
    }
    check(after.bystander === before.bystander, "another account's ledger moved");
    const wrong = await balanced(ctx, ctx.paying.accountId);
    check(wrong === undefined, wrong ?? '');
    return;
  }
  const after = await ledgerState(ctx);
  check(after.paying.length === before.paying.length && after.bystander === before.bystander, 'a ledger moved on a route that moves no money');
  if (row.money === 'admin') {
    const wrong = await balanced(ctx, ctx.sandbox.accountId);
    check(wrong === undefined, wrong ?? '');
  }
}

// ---------------------------------------------------------------------------------------
// Reports

function describeRequest(request: RawRequest): string {
  const body = request.body === undefined ? '(none)' : typeof request.body === 'string' ? request.body : `<${request.body.length} bytes>`;
  const shown = body.length > 20_000 ? `${JSON.stringify(body.slice(0, 20_000))} … (${body.length} characters in all)` : JSON.stringify(body);
  return [
    `${JSON.stringify(request.method)} ${JSON.stringify(request.path.length > 300 ? `${request.path.slice(0, 300)}…` : request.path)}${request.chunked === true ? ' (chunked)' : ''}`,
    ...request.headers.map(([name, value]) => `  ${JSON.stringify(name)}: ${JSON.stringify(value.length > 300 ? `${value.slice(0, 300)}…` : value)}`),
    ...(request.rawLines ?? []).map((line) => `  raw line: ${JSON.stringify(line.length > 300 ? `${line.slice(0, 300)}…` : line)}`),
    `  body: ${shown}`,
  ].join('\n');
}

function saveFailure(row: FuzzRoute, seed: number, request: RawRequest): string {
  const file = join(tmpdir(), `fuzz-failure-${row.route.replace(/[^a-z0-9]+/gi, '_')}-${seed}.json`);
  const body = request.body === undefined ? null : typeof request.body === 'string' ? request.body : `<${request.body.length} bytes>`;
  writeFileSync(file, JSON.stringify({ route: row.route, seed, method: request.method, path: request.path, headers: request.headers, rawLines: request.rawLines ?? [], chunked: request.chunked === true, body }, null, 2));
  return file;
}

/**
 * Runs one row; returns the number of cases and how they were answered (status → count,
 * with the error code). Fails with the request (body included) that broke a property.
 */
export async function fuzzRoute(row: FuzzRoute, ctx: FuzzContext, seed: number, shrink: boolean): Promise<{ cases: number; answers: Map<string, number> }> {
  const answers = new Map<string, number>();
  // fast-check's own report names the case briefly; the failure message below carries the whole request.
  const arbitrary = fc.tuple(row.cases(ctx), variation(row, ctx)).map(([routeCase, v]) => ({
    routeCase,
    request: buildRequest(routeCase, v, ctx),
    [fc.toStringMethod]() {
      return `${this.request.method} ${this.request.path.slice(0, 120)} (body ${this.request.body?.length ?? 0} characters; see the error below)`;
    },
  }));
  await fc.assert(
    fc.asyncProperty(arbitrary, async ({ routeCase, request }) => {
      const before = await ledgerState(ctx);
      let answer: RawAnswer | undefined;
      try {
        answer = await rawExchange(ctx.port, request, ANSWER_WITHIN_MS);
        const code: unknown = jsonOf(answer.body)?.error?.code;
        const label = `${answer.status}${typeof code === 'string' ? ` ${code}` : ''}`;
        answers.set(label, (answers.get(label) ?? 0) + 1);
        await checkAnswer(row, request, routeCase, answer, before, ctx);
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        const file = saveFailure(row, seed, request);
        throw new Error(`${row.route}: ${why}\n--- request (also in ${file}) ---\n${describeRequest(request)}\n--- answer ---\n${answer === undefined ? '(none)' : answer.raw.slice(0, 3000)}`);
      }
    }),
    { seed, numRuns: row.runs, endOnFailure: !shrink },
  );
  return { cases: row.runs, answers };
}
