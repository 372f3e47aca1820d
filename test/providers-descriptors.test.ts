/**
 * One descriptor per provider: every table the gateway keeps per provider is derived from
 * the descriptor list, so a provider added by its descriptor alone (a test-only provider_8
 * here, speaking provider_1's protocol) appears in all of them (docs/providers.md).
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../src/catalog/catalog.ts';
import { parseChatRequest } from '../src/chat/chat-request.ts';
import { planProviderCall } from '../src/chat/provider-plan.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import { startDemoProviders, type DemoProviders } from '../src/demo-providers.ts';
import { PLANNED_PARAMS, type ProviderDescriptor } from '../src/providers/descriptor.ts';
import { chatTable, PROVIDERS } from '../src/providers/descriptors.ts';
import { catalogOptions } from '../src/runnable-models.ts';
import { OpenAiCompatibleAdapter } from '../src/providers/openai-compatible/adapter.ts';
import { adaptersOf, defaultAdapters } from '../src/providers/registry.ts';
import { chatEntry } from './fixtures/catalog.ts';

const provider8 = {
  id: 'provider_8',
  displayName: 'Test host',
  telemetryName: 'test-host',
  envPrefix: 'PROVIDER_8',
  defaultBaseUrl: 'https://api.provider-8.test/v1',
  emulator: 'openai',
  chat: {
    adapter: () => new OpenAiCompatibleAdapter({ replayReasoning: false, abortedFinishReasons: [], thinkingSwitch: false }),
    params: {
      temperature: 'F',
      top_p: 'S',
      seed: 'D',
      frequency_penalty: 'F',
      presence_penalty: 'F',
      logit_bias: 'D',
      parallel_tool_calls: 'F',
      user: 'D',
      reasoning_effort: 'D',
      verbosity: 'D',
    },
    content: { httpsImages: false, dataImages: true, pdfs: false },
    cacheWrites: 'automatic',
  },
} satisfies ProviderDescriptor;

const WITH_8 = [...PROVIDERS, provider8];

describe('the shipped descriptors', () => {
  it('one descriptor per provider id and environment prefix', () => {
    expect(new Set(PROVIDERS.map((d) => d.id)).size).toBe(PROVIDERS.length);
    expect(new Set(PROVIDERS.map((d) => d.envPrefix)).size).toBe(PROVIDERS.length);
  });

  it("hold the spec's per-provider F/S/D table", () => {
    const spec: Record<string, string> = {
      //                   provider_1 provider_2 provider_3 provider_7
      temperature: '        S          S          F          F',
      top_p: '              S          S          F          F',
      seed: '               F          D          F          D',
      frequency_penalty: '  S          D          F          F',
      presence_penalty: '   S          D          F          F',
      logit_bias: '         S          D          D          D',
      parallel_tool_calls: 'F          F          D          D',
      user: '               F          D          D          D',
      reasoning_effort: '   S          D          D          D',
      verbosity: '          S          D          D          D',
    };
    const columns = chatTable(PROVIDERS, (chat) => chat.params);
    for (const name of PLANNED_PARAMS) {
      const row = (['provider_1', 'provider_2', 'provider_3', 'provider_7'] as const).map((id) => columns[id][name]).join(' ');
      expect(row, name).toBe(spec[name]?.trim().split(/\s+/).join(' '));
    }
  });

  it("hold the spec's content-part support per provider", () => {
    expect(chatTable(PROVIDERS, (chat) => chat.content)).toEqual({
      provider_1: { httpsImages: true, dataImages: true, pdfs: true },
      provider_2: { httpsImages: true, dataImages: true, pdfs: true },
      provider_3: { httpsImages: false, dataImages: true, pdfs: true },
      provider_7: { httpsImages: false, dataImages: false, pdfs: false },
    });
  });

  it('give PROVIDER_N_BASE_URL the public URL of DECISIONS.md and no key', () => {
    expect(loadConfig({}).providers).toEqual({
      provider_1: { baseUrl: 'https://api.openai.com/v1', apiKey: undefined, apiKeys: [] },
      provider_2: { baseUrl: 'https://api.anthropic.com', apiKey: undefined, apiKeys: [] },
      provider_3: { baseUrl: 'https://generativelanguage.googleapis.com', apiKey: undefined, apiKeys: [] },
      provider_7: { baseUrl: 'https://api.deepseek.com', apiKey: undefined, apiKeys: [] },
    });
    expect(Object.keys(defaultAdapters()).sort()).toEqual(['provider_1', 'provider_2', 'provider_3', 'provider_7']);
  });

  it('no module that derives a table names a provider id in its code', () => {
    const derived = ['src/config.ts', 'src/providers/registry.ts', 'src/chat/provider-plan.ts', 'src/chat/content-support.ts', 'src/demo-providers.ts', 'src/catalog/catalog.ts', 'src/gateway.ts'];
    for (const file of derived) expect(readFileSync(file, 'utf8'), file).not.toMatch(/['"`]provider_(\d+|custom)['"`]/);
  });
});

describe('a provider added by its descriptor alone (provider_8)', () => {
  it('configuration: PROVIDER_8_BASE_URL (default its public URL) and PROVIDER_8_API_KEY', () => {
    expect(loadConfig({}, WITH_8).providers.provider_8).toEqual({ baseUrl: 'https://api.provider-8.test/v1', apiKey: undefined, apiKeys: [] });
    const config = loadConfig({ PROVIDER_8_BASE_URL: 'http://127.0.0.1:9/v1/', PROVIDER_8_API_KEY: 'sk-8' }, WITH_8);
    expect(config.providers.provider_8).toEqual({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-8', apiKeys: ['sk-8'] });
    // A key pool: comma-separated, in order; the first is the one fine-tuning uses.
    expect(loadConfig({ PROVIDER_8_API_KEY: 'sk-a, sk-b,sk-c' }, WITH_8).providers.provider_8).toMatchObject({ apiKey: 'sk-a', apiKeys: ['sk-a', 'sk-b', 'sk-c'] });
    expect(() => loadConfig({ PROVIDER_8_API_KEY: 'sk-a,,sk-c' }, WITH_8)).toThrow(/PROVIDER_8_API_KEY: a comma-separated list of keys, none of them empty/);
    expect(config.providers.provider_1.baseUrl).toBe('https://api.openai.com/v1');
    expect(() => loadConfig({ PROVIDER_8_BASE_URL: 'not a url' }, WITH_8)).toThrow(ConfigError);
    expect(() => loadConfig({ PROVIDER_8_BASE_URL: 'not a url' }, WITH_8)).toThrow(/PROVIDER_8_BASE_URL/);
  });

  it('adapter registry: a new adapter of its own', () => {
    const adapters = adaptersOf(WITH_8);
    expect(adapters.provider_8).toBeInstanceOf(OpenAiCompatibleAdapter);
    expect(adapters.provider_8).not.toBe(adapters.provider_1);
  });

  it('catalog: its models may carry chat routing facts and need its API key', () => {
    const json = { prices_checked_at: '2026-11-22', models: [chatEntry('p8-chat', 'provider_8')] };
    const options = (env: Record<string, string>) => catalogOptions(loadConfig(env, WITH_8), {}, WITH_8);
    expect(options({}).chatProviders).toContain('provider_8');
    const without = Catalog.fromJson(json, options({}));
    expect(without.bySlug('p8-chat')).toMatchObject({ available: false, unavailableReason: 'The gateway has no API key for provider_8: the operator must set PROVIDER_8_API_KEY.' });
    const withKey = Catalog.fromJson(json, options({ PROVIDER_8_API_KEY: 'sk-8' }));
    expect(withKey.bySlug('p8-chat')?.available).toBe(true);
    // Without the descriptor, the same entry is refused at start-up.
    expect(() => Catalog.fromJson(json, catalogOptions(loadConfig({}), {})))
      .toThrow(/entry 0 'p8-chat', field chat/);
  });

  it("provider plan: its column decides what is forwarded; the rest is named for X-Service-Ignored-Params", () => {
    const json = { prices_checked_at: '2026-11-22', models: [chatEntry('p8-chat', 'provider_8', { chat: { params: ['top_p'], json_schema: 'native', images: null, pdf: false } })] };
    const catalog = Catalog.fromJson(json, catalogOptions(loadConfig({ PROVIDER_8_API_KEY: 'sk-8' }, WITH_8), {}, WITH_8));
    const model = catalog.bySlug('p8-chat');
    if (model === undefined) throw new Error('no model');
    const request = parseChatRequest({ model: 'p8-chat', messages: [{ role: 'user', content: 'hi' }], temperature: 0.5, top_p: 0.9, seed: 7, user: 'u1', frequency_penalty: 0.1 });
    const plan = planProviderCall(request, model, chatTable(WITH_8, (chat) => chat.params));
    expect(plan.provider).toBe('provider_8');
    expect(plan.call).toMatchObject({ temperature: 0.5, top_p: 0.9, frequency_penalty: 0.1 });
    expect(plan.call.seed).toBeUndefined();
    expect(plan.ignored).toEqual(['seed', 'user']);
    // The shipped table has no provider_8 column: a wiring error, never a silent plan.
    expect(() => planProviderCall(request, model)).toThrow(/provider_8 has no chat descriptor/);
  });

  it('content support: its row', () => {
    expect(chatTable(WITH_8, (chat) => chat.content).provider_8).toEqual({ httpsImages: false, dataImages: true, pdfs: false });
  });

  describe('demo', () => {
    let demo: DemoProviders | undefined;
    afterAll(async () => demo?.close());

    it('starts the emulator its descriptor names, on PROVIDER_8_BASE_URL', async () => {
      demo = await startDemoProviders(WITH_8);
      expect(demo.env.PROVIDER_8_BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      expect(demo.env.PROVIDER_8_API_KEY).toBeDefined();
      expect(demo.env.PROVIDER_1_BASE_URL).not.toBe(demo.env.PROVIDER_8_BASE_URL);
      expect(demo.description).toContain('provider_8 → openai emulator');
      expect(Object.keys(loadConfig(demo.env, WITH_8).providers)).toContain('provider_8');
    });
  });
});
