/**
 * The official `openai` client's embeddings.create works unchanged against the gateway
 * (shipped catalog): its default (it asks base64 and decodes), float, base64, with and
 * without dimensions, and its typed errors.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { startGateway, type TestGateway } from './helpers/gateway.ts';

let emu: Emulator;
let gw: TestGateway;
let client: OpenAI;
let accountId: string;

beforeAll(async () => {
  emu = await startEmulator('openai');
  gw = await startGateway({ PROVIDER_1_BASE_URL: emu.baseUrl, PROVIDER_1_API_KEY: emu.apiKey });
  const account = await gw.account({ credits: 10, key: { scopes: ['embeddings'] } });
  accountId = account.accountId;
  client = new OpenAI({ apiKey: account.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await emu.close();
});

const lastUpstreamBody = () => emu.requests.at(-1)?.body as Record<string, unknown>;

describe('openai client: embeddings.create', () => {
  it('the SDK default: it asks base64, the gateway passes base64 through, the SDK decodes the same floats as a float request', async () => {
    const floats = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello world', encoding_format: 'float' });
    expect(lastUpstreamBody().encoding_format).toBe('float');
    const byDefault = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello world' });
    expect(lastUpstreamBody().encoding_format).toBe('base64');
    expect(byDefault.object).toBe('list');
    expect(byDefault.model).toBe('text-embedding-3-small');
    expect(byDefault.data[0]?.embedding).toHaveLength(1536);
    expect(byDefault.data[0]?.embedding).toEqual(floats.data[0]?.embedding);
    expect(byDefault.usage).toEqual({ prompt_tokens: 2, total_tokens: 2 });
  });

  it('base64 asked explicitly: the string as the provider sent it', async () => {
    const answer = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello world', encoding_format: 'base64' });
    const b64 = answer.data[0]?.embedding as unknown as string;
    expect(typeof b64).toBe('string');
    expect(Buffer.from(b64, 'base64').length).toBe(1536 * 4);
  });

  it('with dimensions, in every encoding; several inputs keep their order', async () => {
    const shortened = await client.embeddings.create({ model: 'text-embedding-3-large', input: ['one', 'two', 'three'], dimensions: 256 });
    expect(lastUpstreamBody()).toMatchObject({ model: 'text-embedding-3-large', dimensions: 256, encoding_format: 'base64' });
    expect(shortened.data.map((d) => [d.index, d.embedding.length])).toEqual([[0, 256], [1, 256], [2, 256]]);
    const floats = await client.embeddings.create({ model: 'text-embedding-3-large', input: ['one', 'two', 'three'], dimensions: 256, encoding_format: 'float' });
    expect(floats.data.map((d) => d.embedding)).toEqual(shortened.data.map((d) => d.embedding));
    const full = await client.embeddings.create({ model: 'text-embedding-3-large', input: 'one' });
    expect(full.data[0]?.embedding).toHaveLength(3072);
  });

  it('the job id arrives in X-Job-Id and the run is billed', async () => {
    // 'hello' is 1 token: 2 micro-credits on text-embedding-3-small (USD 0.02 per 1M tokens).
    const { data, response } = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello' }).withResponse();
    const jobId = response.headers.get('x-job-id');
    expect(jobId).toMatch(/^[0-9a-f-]{36}$/);
    expect(data.usage.prompt_tokens).toBe(1);
    const ledger = (await gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).json as { kind: string; job_id: string; credits: number }[];
    expect(ledger.filter((e) => e.job_id === jobId).map((e) => [e.kind, e.credits])).toEqual([['settle', 0.000002], ['hold', 0.000002]]);
  });

  it('errors arrive as the SDK typed errors with the code, type and param', async () => {
    const tooLarge = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'a', dimensions: 5000 }).catch((e: unknown) => e);
    expect(tooLarge).toBeInstanceOf(OpenAI.BadRequestError);
    expect(tooLarge).toMatchObject({ status: 400, code: 'invalid_value', type: 'invalid_request_error', param: 'dimensions' });
    const unknown = await client.embeddings.create({ model: 'no-such-embedder', input: 'a' }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown).toMatchObject({ code: 'model_not_found' });
    const many = await client.embeddings.create({ model: 'text-embedding-3-large', input: Array.from({ length: 652 }, () => 'a') }).catch((e: unknown) => e);
    expect(many).toBeInstanceOf(OpenAI.APIError);
    expect(many).toMatchObject({ status: 413, code: 'too_many_embedding_values' });
  });
});
