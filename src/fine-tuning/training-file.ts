/**
 * A fine-tuning file argument (`training_file`, `validation_file`): an https URL the gateway
 * fetches, or a `data:` URL, of JSONL chat examples. Read whole (at most MAX_FILE_BYTES),
 * checked line by line, and its training tokens counted with the gateway's tokenizer.
 * Every refusal is 400 validation_failed naming the field; nothing is held yet.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { countTextTokens } from '../billing/tokens.ts';
import { parseAddress } from '../gate/address-match.ts';
import { GatewayError } from '../shared/errors.ts';

/** The largest file the gateway reads (provider_1 takes up to 512 MB; counting tokens of more stalls a process). */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 30_000;

export type FileField = 'training_file' | 'validation_file';

export interface TrainingFile {
  /** A name for the provider's upload. */
  filename: string;
  bytes: Buffer;
  examples: number;
  /** Tokens of the file's lines (cl100k_base, an upper bound of what one epoch trains on). */
  tokens: number;
}

/** How client URLs are fetched. Production: public addresses only, the system's CAs. */
export interface FileFetchOptions {
  /** Tests serve files from loopback. */
  allowPrivateAddresses?: boolean;
  /** Extra CA certificates to trust (a test's self-signed server). */
  ca?: string | Buffer;
}

function invalid(field: FileField, why: string): GatewayError {
  return new GatewayError('validation_failed', `${field}: ${why}`, { param: field, details: { formErrors: [], fieldErrors: { [field]: [why] } } });
}

function isPublic(address: string): boolean {
  const parsed = parseAddress(address);
  return parsed !== undefined && parsed.range() === 'unicast';
}

/** A DNS look-up that refuses names resolving to loopback, private, link-local or other non-public addresses. */
function publicLookup(): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err !== null) return callback(err, '', 0);
      const usable = addresses.filter((a) => isPublic(a.address));
      if (usable.length === 0) return callback(Object.assign(new Error(`${hostname} resolves to no public address`), { code: 'ENOTFOUND' }), '', 0);
      if (options.all === true) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      const first = usable[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

export class FileReader {
  private readonly agent: Agent;

  constructor(private readonly options: FileFetchOptions = {}) {
    const connect: Record<string, unknown> = {};
    if (options.ca !== undefined) connect.ca = options.ca;
    if (options.allowPrivateAddresses !== true) connect.lookup = publicLookup();
    this.agent = new Agent({ connect, headersTimeout: FETCH_TIMEOUT_MS, bodyTimeout: FETCH_TIMEOUT_MS });
  }

  /** The file as checked and counted; 400 validation_failed naming the field when it cannot be used. */
  async read(field: FileField, value: string): Promise<TrainingFile> {
    const bytes = value.startsWith('data:') ? decodeDataUrl(field, value) : await this.fetch(field, value);
    const { examples, tokens } = await checkJsonl(field, bytes);
    return { filename: value.startsWith('data:') ? `${field}.jsonl` : nameOf(value), bytes, examples, tokens };
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  private async fetch(field: FileField, value: string): Promise<Buffer> {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw invalid(field, 'must be an https URL or a data: URL of JSONL');
    }
    if (url.protocol !== 'https:') throw invalid(field, 'must be an https URL or a data: URL of JSONL');
    const literal = parseAddress(url.hostname);
    if (literal !== undefined && this.options.allowPrivateAddresses !== true && literal.range() !== 'unicast') throw invalid(field, 'the URL must name a public host');
    try {
      const response = await request(url, { method: 'GET', dispatcher: this.agent, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
      if (response.statusCode !== 200) {
        await response.body.dump();
        throw invalid(field, `fetching the URL answered HTTP ${response.statusCode}`);
      }
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > MAX_FILE_BYTES) {
        await response.body.destroy();
        throw tooLarge(field);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        const piece = chunk as Buffer;
        size += piece.length;
        if (size > MAX_FILE_BYTES) {
          response.body.destroy();
          throw tooLarge(field);
        }
        chunks.push(piece);
      }
      return Buffer.concat(chunks);
    } catch (thrown) {
      if (thrown instanceof GatewayError) throw thrown;
      throw invalid(field, 'the URL could not be fetched');
    }
  }
}

function tooLarge(field: FileField): GatewayError {
  return invalid(field, `the file is over ${MAX_FILE_BYTES / (1024 * 1024)} MB`);
}

function nameOf(url: string): string {
  const last = new URL(url).pathname.split('/').pop() ?? '';
  return /^[\w.-]{1,100}$/.test(last) ? last : 'training.jsonl';
}

const DATA_URL = /^data:([\w.+-]+\/[\w.+-]+)?((?:;[\w-]+=[^;,]*)*)(;base64)?,(.*)$/s;

function decodeDataUrl(field: FileField, value: string): Buffer {
  const match = DATA_URL.exec(value);
  if (match === null) throw invalid(field, 'is not a valid data: URL');
  const payload = match[4] as string;
  let bytes: Buffer;
  if (match[3] !== undefined) {
    if (!/^[A-Za-z0-9+/=\s]*$/.test(payload)) throw invalid(field, 'is not valid base64');
    bytes = Buffer.from(payload, 'base64');
  } else {
    try {
      bytes = Buffer.from(decodeURIComponent(payload), 'utf8');
    } catch {
      throw invalid(field, 'is not a valid percent-encoded data: URL');
    }
  }
  if (bytes.length > MAX_FILE_BYTES) throw tooLarge(field);
  return bytes;
}

/** Every non-empty line a JSON object with a non-empty `messages` array of `{role, …}`. */
async function checkJsonl(field: FileField, bytes: Buffer): Promise<{ examples: number; tokens: number }> {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw invalid(field, 'the file is not UTF-8 text');
  }
  const lines: string[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    let example: unknown;
    try {
      example = JSON.parse(trimmed);
    } catch {
      throw invalid(field, `line ${i + 1} is not valid JSON (the file must be JSONL)`);
    }
    const messages = typeof example === 'object' && example !== null && !Array.isArray(example) ? (example as { messages?: unknown }).messages : undefined;
    if (!Array.isArray(messages) || messages.length === 0 || !messages.every((m) => typeof m === 'object' && m !== null && typeof (m as { role?: unknown }).role === 'string')) {
      throw invalid(field, `line ${i + 1} is not a chat example (an object with a non-empty "messages" array of {role, content})`);
    }
    lines.push(trimmed);
  }
  if (lines.length === 0) throw invalid(field, 'the file has no examples');
  return { examples: lines.length, tokens: await countTextTokens(lines) };
}
