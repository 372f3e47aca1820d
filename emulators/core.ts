/**
 * The protocol-independent part of every emulator: the node:http server, the scenario
 * queue, request recording, the shared answer model, and delivery (delays, keep-alives,
 * per-event flushing, stream errors, cuts, hangs). Each protocol module only validates
 * requests and renders answers into its own wire format.
 */
import http from 'node:http';
import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  Emulator,
  EmulatorKind,
  RecordedRequest,
  Scenario,
  ScenarioOptions,
  ScenarioUsage,
  StartOptions,
} from './types.ts';
import { followRequest, isFollowed } from './scripted-answers.ts';
import { isRecord, tokensFor, truncate } from './util.ts';

export const DEFAULT_API_KEY = 'emu-key';
/** The built-in default streams its answer in about this many content chunks (the benchmark relies on it). */
export const DEFAULT_CHUNKS = 20;

export interface Picked {
  scenario: Scenario | null;
  opts: ScenarioOptions;
}

/** One received request, as a protocol module sees it. */
export interface Exchange {
  readonly kind: EmulatorKind;
  /** The key to check the request against: the one it presents when the emulator accepts it, else the emulator's own. */
  readonly apiKey: string;
  readonly method: string;
  /** Path and query as received. */
  readonly url: string;
  readonly pathname: string;
  /** The query string without `?` ('' when none). */
  readonly search: string;
  readonly headers: IncomingHttpHeaders;
  readonly raw: string;
  /** Parsed JSON, or undefined when the body is empty or not JSON. */
  readonly body: unknown;
  /** True when a non-empty body is not valid JSON. */
  readonly bodyInvalid: boolean;
  /** Takes the next queued scenario, or the default (a throttled key's 429 first). Call only once the request is accepted. */
  take(): Picked;
}

export interface JsonReply {
  type: 'json';
  status: number;
  headers: OutgoingHttpHeaders;
  body: string;
  /** Binary content sent instead of `body`, at once (files the predictions emulator serves). */
  bytes?: Buffer;
  opts?: ScenarioOptions;
  /** The protocol sends blank lines before a slow JSON body (DeepSeek under load). */
  blankLineKeepAlives?: boolean;
  /** Send half the body, then destroy the socket. */
  cut?: boolean;
}

export interface SseReply {
  type: 'sse';
  headers: OutgoingHttpHeaders;
  /** Complete, framed events of the successful stream, terminator included. */
  events: string[];
  /** Indexes of the events that carry content deltas (text, reasoning, tool arguments). */
  content: number[];
  /** Index of the first event after the content (the finish event). */
  finishAt: number;
  /** Where and what a keep-alive is, when the protocol has one. */
  keepAlive?: { at: number; text: string };
  /** 'end': the whole stream; 'error': stop after `afterChunks` content events, send `errorEvent`, end; 'cut': stop there and destroy the socket. */
  end: 'end' | 'error' | 'cut';
  afterChunks?: number;
  errorEvent?: string;
  opts?: ScenarioOptions;
}

export type Reply = JsonReply | SseReply | { type: 'hang' };

export interface ProtocolImpl {
  kind: EmulatorKind;
  /** Appended to `http://host:port` to make the base URL. */
  basePath: string;
  handle(ex: Exchange): Reply;
  /** Clears what the protocol remembers between requests (the emulator's `reset()`). */
  reset?(): void;
}

// ---------------------------------------------------------------------------
// The answer model shared by every protocol

export interface AnswerCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
  json: string;
}

export interface Answer {
  text: string;
  reasoning: string;
  refusal: string | null;
  calls: AnswerCall[];
  /** The protocol's own finish value. */
  finish: string;
  usage: ScenarioUsage | null;
  chunks: number;
  blocked: boolean;
}

export interface AnswerContext {
  kind: EmulatorKind;
  /** Characters of input text (system, messages, tool results, tool-call arguments). */
  inputChars: number;
  lastUserText: string;
  /** The request is in a thinking mode: the built-in default then includes reasoning. */
  thinking: boolean;
  finishes: { stop: string; tool: string; filter: string; refusal: string };
  /** The protocol counts reasoning inside its output count (all but Gemini). */
  reasoningInOutput: boolean;
  callId(index: number): string;
}

export function defaultText(kind: EmulatorKind, lastUserText: string): string {
  return `Hello from ${kind} emulator. You said: ${truncate(lastUserText, 200)}`;
}

function defaultReasoning(lastUserText: string): string {
  return `The user wrote "${truncate(lastUserText, 60)}". A short, friendly answer will do.`;
}

/** An answer that follows the request (scripted-answers.ts) reasons in a thinking mode, as the built-in one does. */
function followedReasoning(s: Scenario, ctx: AnswerContext): string {
  return isFollowed(s) && ctx.thinking ? defaultReasoning(ctx.lastUserText) : '';
}

function computedUsage(ctx: AnswerContext, text: string, reasoning: string, calls: AnswerCall[]): ScenarioUsage {
  let outChars = text.length;
  for (const c of calls) outChars += c.name.length + c.json.length;
  const reasoningTokens = tokensFor(reasoning.length);
  const output = tokensFor(outChars) + (ctx.reasoningInOutput ? reasoningTokens : 0);
  return { input: Math.max(1, tokensFor(ctx.inputChars)), output, reasoning: reasoningTokens, cacheRead: 0, cacheWrite: 0 };
}

function usageOf(spec: ScenarioUsage | 'none' | undefined, computed: () => ScenarioUsage): ScenarioUsage | null {
  if (spec === 'none') return null;
  return spec ?? computed();
}

/** The answer for a chat request under a scenario (null = the built-in default). */
export function buildAnswer(s: Scenario | null, ctx: AnswerContext): Answer {
  if (s !== null && s.kind === 'text') {
    const refusal = s.refusal ?? null;
    const text = s.text;
    const reasoning = s.reasoning ?? followedReasoning(s, ctx);
    return {
      text,
      reasoning,
      refusal,
      calls: [],
      finish: s.finish ?? (refusal !== null ? ctx.finishes.refusal : ctx.finishes.stop),
      usage: usageOf(s.usage, () => computedUsage(ctx, text + (refusal ?? ''), reasoning, [])),
      chunks: Math.max(1, Math.floor(s.chunks ?? DEFAULT_CHUNKS)),
      blocked: false,
    };
  }
  if (s !== null && s.kind === 'tool_calls') {
    const calls = s.calls.map((c, i) => ({ id: ctx.callId(i), name: c.name, args: c.arguments, json: JSON.stringify(c.arguments) }));
    const text = s.text ?? '';
    const reasoning = s.reasoning ?? followedReasoning(s, ctx);
    return {
      text,
      reasoning,
      refusal: null,
      calls,
      finish: s.finish ?? ctx.finishes.tool,
      usage: usageOf(s.usage, () => computedUsage(ctx, text, reasoning, calls)),
      chunks: DEFAULT_CHUNKS,
      blocked: false,
    };
  }
  if (s !== null && s.kind === 'blocked') {
    return {
      text: '',
      reasoning: '',
      refusal: null,
      calls: [],
      finish: ctx.finishes.filter,
      usage: { input: Math.max(1, tokensFor(ctx.inputChars)), output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
      chunks: DEFAULT_CHUNKS,
      blocked: true,
    };
  }
  // null (built-in default), stream_error, cut, and scenarios meant for another operation.
  const text = s !== null && (s.kind === 'stream_error' || s.kind === 'cut') && s.text !== undefined ? s.text : defaultText(ctx.kind, ctx.lastUserText);
  const reasoning = s === null && ctx.thinking ? defaultReasoning(ctx.lastUserText) : '';
  return {
    text,
    reasoning,
    refusal: null,
    calls: [],
    finish: ctx.finishes.stop,
    usage: computedUsage(ctx, text, reasoning, []),
    chunks: DEFAULT_CHUNKS,
    blocked: false,
  };
}

/** How a stream built from `answer` must end under the scenario. */
export function streamEnd(s: Scenario | null): { end: 'end' | 'error' | 'cut'; afterChunks: number } {
  if (s !== null && (s.kind === 'stream_error' || s.kind === 'cut')) {
    return { end: s.kind === 'cut' ? 'cut' : 'error', afterChunks: Math.max(0, Math.floor(s.afterChunks)) };
  }
  return { end: 'end', afterChunks: 0 };
}

// ---------------------------------------------------------------------------
// Delivery

interface Step {
  wait: number;
  data: string;
}

class Delivery {
  constructor(
    private readonly res: ServerResponse,
    private readonly timers: Set<NodeJS.Timeout>,
  ) {}

  private dead(): boolean {
    const socket = this.res.socket;
    return this.res.writableEnded || this.res.destroyed || socket === null || socket.destroyed;
  }

  private destroySoon(): void {
    const socket = this.res.socket;
    if (socket === null) return;
    setImmediate(() => socket.destroy());
  }

  /** Writes steps (each after its wait; the head goes with the first byte unless written early), then ends or destroys. */
  run(status: number, headers: OutgoingHttpHeaders, steps: Step[], headersEarly: boolean, finish: 'end' | 'destroy'): void {
    const res = this.res;
    if (headersEarly) {
      res.writeHead(status, headers);
      res.flushHeaders();
    }
    const head = (): void => {
      if (!res.headersSent) res.writeHead(status, headers);
    };
    const finishWith = (data: string): void => {
      head();
      if (finish === 'end') {
        res.end(data);
      } else if (data !== '') {
        res.write(data, () => this.destroySoon());
      } else {
        res.flushHeaders();
        this.destroySoon();
      }
    };
    let i = 0;
    const pump = (): void => {
      if (this.dead()) return;
      // Steps that need no wait go out in one write.
      let batch = '';
      while (i < steps.length) {
        const step = steps[i] as Step;
        if (step.wait > 0) {
          if (batch !== '') {
            head();
            res.write(batch);
          }
          const t = setTimeout(() => {
            this.timers.delete(t);
            if (this.dead()) return;
            i++;
            if (i >= steps.length) return finishWith(step.data);
            head();
            res.write(step.data);
            pump();
          }, step.wait);
          this.timers.add(t);
          return;
        }
        batch += step.data;
        i++;
      }
      finishWith(batch);
    };
    pump();
  }
}

function cutPoint(r: SseReply): number {
  const n = r.afterChunks ?? 0;
  const first = r.content[0];
  if (n <= 0) return first ?? r.finishAt;
  if (n >= r.content.length) return r.finishAt;
  return (r.content[n - 1] as number) + 1;
}

function deliver(res: ServerResponse, reply: Reply, timers: Set<NodeJS.Timeout>): void {
  if (reply.type === 'hang') return;
  const o = reply.opts ?? {};
  const delay = Math.max(0, o.delayMs ?? 0);
  const gap = Math.max(0, o.chunkDelayMs ?? 0);
  const kas = Math.max(0, Math.floor(o.keepAlives ?? 0));
  const d = new Delivery(res, timers);

  if (reply.type === 'json') {
    const headers = reply.headers;
    if (reply.bytes !== undefined) {
      headers['content-length'] = reply.bytes.length;
      res.writeHead(reply.status, headers);
      res.end(reply.bytes);
      return;
    }
    if (reply.cut) {
      const half = reply.body.slice(0, Math.max(1, Math.floor(reply.body.length / 2)));
      d.run(reply.status, headers, [{ wait: delay, data: half }], false, 'destroy');
      return;
    }
    if (reply.blankLineKeepAlives === true && kas > 0) {
      const w = delay / (kas + 1);
      const steps: Step[] = [];
      for (let k = 0; k < kas; k++) steps.push({ wait: w, data: '\n' });
      steps.push({ wait: w, data: reply.body });
      d.run(reply.status, headers, steps, true, 'end');
      return;
    }
    headers['content-length'] = Buffer.byteLength(reply.body);
    if (delay === 0) {
      res.writeHead(reply.status, headers);
      res.end(reply.body);
      return;
    }
    d.run(reply.status, headers, [{ wait: delay, data: reply.body }], false, 'end');
    return;
  }

  let seq: string[];
  if (reply.end === 'end') {
    seq = reply.events;
  } else {
    seq = reply.events.slice(0, cutPoint(reply));
    if (reply.end === 'error' && reply.errorEvent !== undefined) seq.push(reply.errorEvent);
  }
  const ka = reply.keepAlive !== undefined && kas > 0 ? reply.keepAlive : undefined;
  const steps: Step[] = [];
  let headersEarly = false;
  if (ka !== undefined && ka.at === 0) {
    headersEarly = true;
    const w = delay / (kas + 1);
    for (let k = 0; k < kas; k++) steps.push({ wait: w, data: ka.text });
    seq.forEach((e, i) => steps.push({ wait: i === 0 ? w : gap, data: e }));
  } else {
    seq.forEach((e, i) => {
      if (ka !== undefined && i === ka.at) for (let k = 0; k < kas; k++) steps.push({ wait: gap, data: ka.text });
      steps.push({ wait: i === 0 ? delay : gap, data: e });
    });
  }
  d.run(200, reply.headers, steps, headersEarly, reply.end === 'cut' ? 'destroy' : 'end');
}

// ---------------------------------------------------------------------------
// The server

const CONTROL_PREFIX = '/__emulator/';

function isScenario(v: unknown): v is Scenario {
  return isRecord(v) && typeof v.kind === 'string';
}

function optionsOf(v: unknown): ScenarioOptions | undefined {
  return isRecord(v) ? (v as ScenarioOptions) : undefined;
}

/** The key a request presents, wherever its protocol carries it (Bearer, x-api-key, x-goog-api-key, ?key=). */
export function presentedKey(headers: IncomingHttpHeaders, search: string): string | undefined {
  const first = (name: string) => {
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const bearer = /^Bearer (.+)$/i.exec(first('authorization') ?? '')?.[1];
  return bearer ?? first('x-api-key') ?? first('x-goog-api-key') ?? (new URLSearchParams(search).get('key') ?? undefined);
}

export async function startServer(impl: ProtocolImpl, opts: StartOptions = {}): Promise<Emulator> {
  const apiKey = opts.apiKey ?? DEFAULT_API_KEY;
  // Every key the emulator accepts: a request presenting one of them is checked against it by its protocol.
  const accepted = new Set([apiKey, ...(opts.apiKeys ?? [])]);
  /** Keys answered 429 (the protocol's own body) until unthrottled, with their retry-after seconds. */
  const throttled = new Map<string, number>();
  const host = opts.host ?? '127.0.0.1';
  const record = opts.record ?? true;
  const control = opts.control ?? false;
  const follow = opts.followRequests ?? false;
  const requests: RecordedRequest[] = [];
  const queue: Picked[] = [];
  let fallback: Picked = { scenario: null, opts: {} };
  const timers = new Set<NodeJS.Timeout>();

  // A scripted scenario (queued, or a default someone set) always wins; then, when asked, an answer that follows the request.
  const take = (body: unknown): Picked => {
    const next = queue.shift();
    if (next !== undefined) return next;
    if (fallback.scenario !== null || !follow) return fallback;
    const followed = followRequest(impl.kind, body);
    return followed === null ? fallback : { scenario: followed, opts: fallback.opts };
  };
  /** A throttled key's 429 comes before any queued scenario, and consumes none. */
  const takeFor = (key: string | undefined, body: unknown): Picked => {
    const after = key === undefined ? undefined : throttled.get(key);
    if (after !== undefined) return { scenario: { kind: 'error', status: 429, headers: { 'retry-after': String(after) } }, opts: {} };
    return take(body);
  };

  const api = {
    failFirst(count: number, status: number, headers?: Record<string, string>): void {
      for (let i = 0; i < count; i++) queue.push({ scenario: { kind: 'error', status, ...(headers === undefined ? {} : { headers }) }, opts: {} });
    },
    throttle(key: string, retryAfterSeconds = 1): void {
      throttled.set(key, retryAfterSeconds);
    },
    unthrottle(key: string): void {
      throttled.delete(key);
    },
    enqueue(s: Scenario, o?: ScenarioOptions): void {
      queue.push({ scenario: s, opts: o ?? {} });
    },
    setDefault(s: Scenario | null, o?: ScenarioOptions): void {
      fallback = { scenario: s, opts: o ?? {} };
    },
    reset(): void {
      queue.length = 0;
      requests.length = 0;
      throttled.clear();
      fallback = { scenario: null, opts: {} };
      impl.reset?.();
    },
  };

  const controlRoute = (method: string, pathname: string, body: unknown, res: ServerResponse): void => {
    const op = pathname.slice(CONTROL_PREFIX.length);
    const send = (status: number, v: unknown): void => {
      const text = JSON.stringify(v);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (method === 'GET' && op === 'requests') return send(200, { requests });
    if (method === 'POST' && op === 'enqueue' && isRecord(body) && isScenario(body.scenario)) {
      api.enqueue(body.scenario, optionsOf(body.options));
      return send(200, { ok: true, queued: queue.length });
    }
    if (method === 'POST' && op === 'default' && isRecord(body) && (body.scenario === null || isScenario(body.scenario))) {
      api.setDefault(body.scenario as Scenario | null, optionsOf(body.options));
      return send(200, { ok: true });
    }
    if (method === 'POST' && op === 'reset') {
      api.reset();
      return send(200, { ok: true });
    }
    send(404, { error: `unknown control route ${method} ${pathname}` });
  };

  const server = http.createServer({ noDelay: true, keepAliveTimeout: 65_000 }, (req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      raw += chunk;
    });
    req.on('end', () => {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const pathname = q === -1 ? url : url.slice(0, q);
      const search = q === -1 ? '' : url.slice(q + 1);
      let body: unknown;
      let bodyInvalid = false;
      if (raw !== '') {
        try {
          body = JSON.parse(raw);
        } catch {
          bodyInvalid = true;
        }
      }
      const method = req.method ?? 'GET';
      if (control && pathname.startsWith(CONTROL_PREFIX)) return controlRoute(method, pathname, body, res);
      if (record) requests.push({ method, path: url, headers: req.headers, body: bodyInvalid ? raw : body, rawBody: raw });
      const presented = presentedKey(req.headers, search);
      const key = presented !== undefined && accepted.has(presented) ? presented : apiKey;
      const ex: Exchange = { kind: impl.kind, apiKey: key, method, url, pathname, search, headers: req.headers, raw, body, bodyInvalid, take: () => takeFor(presented, body) };
      let reply: Reply;
      try {
        reply = impl.handle(ex);
      } catch (err) {
        const text = JSON.stringify({ emulator_error: String(err instanceof Error ? (err.stack ?? err.message) : err) });
        res.writeHead(500, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
        return;
      }
      deliver(res, reply, timers);
    });
  });
  // A hanging request must stay open until close(): no server-side timeouts.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.timeout = 0;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const hostForUrl = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address === '0.0.0.0' ? '127.0.0.1' : addr.address;
  let closed: Promise<void> | undefined;

  return {
    kind: impl.kind,
    baseUrl: `http://${hostForUrl}:${addr.port}${impl.basePath}`,
    apiKey,
    requests,
    ...api,
    close(): Promise<void> {
      if (closed === undefined) {
        closed = new Promise<void>((resolve) => {
          for (const t of timers) clearTimeout(t);
          timers.clear();
          server.close(() => resolve());
          server.closeAllConnections();
        });
      }
      return closed;
    },
  };
}

// ---------------------------------------------------------------------------
// Helpers for protocol modules

export const JSON_TYPE = 'application/json';
export const SSE_CONTENT_TYPE = 'text/event-stream; charset=utf-8';

/** A JSON reply; `headers` becomes the reply's own (it may be changed later), with a JSON content type unless it has one. */
export function jsonReply(status: number, body: unknown, headers: OutgoingHttpHeaders = {}, opts?: ScenarioOptions): JsonReply {
  if (headers['content-type'] === undefined) headers['content-type'] = JSON_TYPE;
  return { type: 'json', status, headers, body: JSON.stringify(body), opts };
}

/** SSE headers besides the content type. */
export const SSE_HEADERS: OutgoingHttpHeaders = {
  'content-type': SSE_CONTENT_TYPE,
  'cache-control': 'no-cache',
  connection: 'keep-alive',
};

/** A header's first value, lower-cased name. */
export function header(ex: Exchange, name: string): string | undefined {
  const v = ex.headers[name];
  return Array.isArray(v) ? v[0] : v;
}


/** Masks a key the way providers echo it: `sk-ab***cd`. */
export function maskKey(key: string): string {
  if (key.length <= 8) return `${key.slice(0, 2)}***`;
  return `${key.slice(0, 3)}***${key.slice(-4)}`;
}
