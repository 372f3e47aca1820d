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
 * deepseek `…` (+ /chat/completions).
 */
import { startServer, DEFAULT_API_KEY, DEFAULT_CHUNKS } from './core.ts';
import { openAIProtocol } from './openai.ts';
import { deepSeekProtocol } from './deepseek.ts';
import { anthropicProtocol } from './anthropic.ts';
import { geminiProtocol } from './gemini.ts';
import type { Emulator, EmulatorKind, StartOptions } from './types.ts';

export type {
  Emulator,
  EmulatorKind,
  RecordedRequest,
  Scenario,
  ScenarioOptions,
  ScenarioToolCall,
  ScenarioUsage,
  StartOptions,
} from './types.ts';
export { DEFAULT_API_KEY, DEFAULT_CHUNKS };

export const EMULATOR_KINDS: readonly EmulatorKind[] = ['openai', 'anthropic', 'gemini', 'deepseek'];

/** The gateway's provider id for each emulator kind. */
export const PROVIDER_OF_KIND: Record<EmulatorKind, 'provider_1' | 'provider_2' | 'provider_3' | 'provider_7'> = {
  openai: 'provider_1',
  anthropic: 'provider_2',
  gemini: 'provider_3',
  deepseek: 'provider_7',
};

const PROTOCOLS = {
  openai: openAIProtocol,
  anthropic: anthropicProtocol,
  gemini: geminiProtocol,
  deepseek: deepSeekProtocol,
};

export function startEmulator(kind: EmulatorKind, opts?: StartOptions): Promise<Emulator> {
  const protocol = PROTOCOLS[kind];
  if (protocol === undefined) return Promise.reject(new Error(`unknown emulator kind: ${String(kind)}`));
  return startServer(protocol, opts);
}
