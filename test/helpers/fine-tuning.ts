/**
 * Fine-tuning test fixtures: a catalog with fine-tunable provider_1 models, JSONL training
 * files made in the test, their hold as the gateway counts it, and a local https server with
 * a self-signed certificate made by openssl at test time (the gateway trusts it through the
 * `fileFetch` override; no network beyond loopback).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countTextTokens } from '../../src/billing/tokens.ts';
import { chatEntry, embeddingEntry, writeCatalog, type Entry } from '../fixtures/catalog.ts';

/** USD 25 per 1M trained tokens = 2,500 micro-credits per token. */
export const TRAINING_MICRO_PER_TOKEN = 2_500;

export function fineTuningCatalog(extra: Entry[] = []): string {
  return writeCatalog([
    chatEntry('tune-me', 'provider_1', { tags: ['fine-tunable'], pricing: { unit: 'per_token', input_usd_per_1m: '1', output_usd_per_1m: '4', training_usd_per_1m: '25' } }),
    chatEntry('no-tune', 'provider_1'),
    chatEntry('tag-no-price', 'provider_1', { tags: ['fine-tunable'] }),
    embeddingEntry('text-embedding-3-small'),
    ...extra,
  ]);
}

/** `n` chat examples, one JSON object per line. */
export function jsonl(n: number, words = 'The gateway bills trained tokens'): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    lines.push(JSON.stringify({ messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: `${words} #${i}?` }, { role: 'assistant', content: `Yes, ${i}.` }] }));
  }
  return lines.join('\n') + '\n';
}

export function dataUrl(text: string): string {
  return `data:application/jsonl;base64,${Buffer.from(text).toString('base64')}`;
}

/** The hold the gateway makes: the file's line tokens × epochs × the training price. */
export async function holdOf(text: string, epochs: number): Promise<number> {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  return (await countTextTokens(lines)) * epochs * TRAINING_MICRO_PER_TOKEN;
}

export interface HttpsFiles {
  url: string;
  ca: string;
  /** Serves `body` at `path` (200), or a status. */
  serve(path: string, body: string | number): void;
  requests: string[];
  close(): Promise<void>;
}

/** An https server on 127.0.0.1 with a fresh self-signed certificate for that address. */
export async function startHttpsFiles(): Promise<HttpsFiles> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-ft-tls-'));
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  const tls = { key: readFileSync(key), cert: readFileSync(cert) };
  rmSync(dir, { recursive: true, force: true });
  const files = new Map<string, string | number>();
  const requests: string[] = [];
  const server: Server = createServer(tls, (req, res) => {
    requests.push(req.url ?? '');
    const body = files.get(req.url ?? '');
    if (body === undefined || typeof body === 'number') {
      res.writeHead(typeof body === 'number' ? body : 404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/jsonl' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    ca: tls.cert.toString(),
    serve: (path, body) => files.set(path, body),
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
