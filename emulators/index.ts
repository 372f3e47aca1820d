/**
 * Provider protocol emulators: fake provider servers speaking each real wire format.
 *
 *   const emu = await startEmulator('openai');          // baseUrl http://127.0.0.1:PORT/v1, apiKey 'emu-key'
 *   emu.enqueue({ kind: 'text', text: 'Hi', usage: { input: 10, output: 2 } });
 *   emu.enqueue({ kind: 'stream_error', afterChunks: 3 }, { chunkDelayMs: 5 });
 *   ...; await emu.close();
 *
 * Base URLs follow DECISIONS.md: openai `…/v1` (+ /chat/completions, /embeddings); anthropic `…`
 * (+ /v1/messages); gemini `…` (+ /v1beta/models/{id}:generateContent | :streamGenerateContent?alt=sse);
 * deepseek `…` (+ /chat/completions); predictions `…/v1` (+ /models/{owner}/{name}/predictions, /predictions/{id}),
 * the one emulator of every media and GPU host (provider_4, 5, 6, 9, 10, custom).
 */
import { startServer, DEFAULT_API_KEY, DEFAULT_CHUNKS } from './core.ts';
import { openAIProtocol } from './openai.ts';
import { deepSeekProtocol } from './deepseek.ts';
import { anthropicProtocol } from './anthropic.ts';
import { geminiProtocol } from './gemini.ts';
import { predictionsProtocol } from './predictions.ts';
import type { ProtocolImpl } from './core.ts';
import type { Emulator, EmulatorKind, StartOptions } from './types.ts';

export type {
  Emulator,
  EmulatorKind,
  PredictionScenario,
  RecordedRequest,
  Scenario,
  ScenarioOptions,
  ScenarioToolCall,
  ScenarioUsage,
  StartOptions,
} from './types.ts';
export { DEFAULT_API_KEY, DEFAULT_CHUNKS };

export const EMULATOR_KINDS: readonly EmulatorKind[] = ['openai', 'anthropic', 'gemini', 'deepseek', 'predictions'];

/** The gateway's provider ids each emulator kind stands for. */
export const PROVIDERS_OF_KIND: Record<EmulatorKind, readonly string[]> = {
  openai: ['provider_1'],
  anthropic: ['provider_2'],
  gemini: ['provider_3'],
  deepseek: ['provider_7'],
  predictions: ['provider_4', 'provider_5', 'provider_6', 'provider_9', 'provider_10', 'custom'],
};

/** The gateway's `<PREFIX>_BASE_URL` / `<PREFIX>_API_KEY` variable prefix of a provider id. */
export function envPrefixOf(provider: string): string {
  return provider === 'custom' ? 'PROVIDER_CUSTOM' : provider.toUpperCase();
}

/** Protocols with per-server state (the predictions they run) are made fresh for each emulator. */
const PROTOCOLS: Record<EmulatorKind, () => ProtocolImpl> = {
  openai: openAIProtocol,
  anthropic: anthropicProtocol,
  gemini: () => geminiProtocol,
  deepseek: () => deepSeekProtocol,
  predictions: predictionsProtocol,
};

export function startEmulator(kind: EmulatorKind, opts?: StartOptions): Promise<Emulator> {
  const protocol = PROTOCOLS[kind];
  if (protocol === undefined) return Promise.reject(new Error(`unknown emulator kind: ${String(kind)}`));
  return startServer(protocol(), opts);
}

/** `<PREFIX>_BASE_URL` and `<PREFIX>_API_KEY` pointing every provider the emulator stands for at it. */
export function emulatorEnv(emulator: Emulator): Record<string, string> {
  const env: Record<string, string> = {};
  for (const provider of PROVIDERS_OF_KIND[emulator.kind]) {
    env[`${envPrefixOf(provider)}_BASE_URL`] = emulator.baseUrl;
    env[`${envPrefixOf(provider)}_API_KEY`] = emulator.apiKey;
  }
  return env;
}
