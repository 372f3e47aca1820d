/**
 * Claude Code itself (`@anthropic-ai/claude-code`, its native binary, unchanged) through the
 * gateway's Messages route, headless: `claude -p PROMPT --output-format json --model M
 * --max-turns 3` with nothing in its environment but PATH, a throw-away HOME, ANTHROPIC_BASE_URL,
 * ANTHROPIC_API_KEY and the three switches that keep it off the network. Against the provider_2
 * emulator (passthrough) and a translated provider's (provider_1): a one-shot prompt, and a
 * tool-use turn (Claude Code reads a file, the answer follows its result).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Emulator } from '../emulators/types.ts';
import { chatEntry } from './fixtures/catalog.ts';
import { startChatHarness, type ChatHarness } from './helpers/chat.ts';

/**
 * The native binary: the platform package's own (what the wrapper's postinstall copies over its
 * bin/claude.exe placeholder), else that copy.
 */
function claudeBinary(): string {
  const require = createRequire(import.meta.url);
  try {
    return join(dirname(require.resolve(`@anthropic-ai/claude-code-${process.platform}-${process.arch}/package.json`)), 'claude');
  } catch {
    return join(dirname(require.resolve('@anthropic-ai/claude-code/package.json')), 'bin', 'claude.exe');
  }
}
const CLAUDE = claudeBinary();

/** The model Claude Code asks for its own small tasks (titles, checks): served by a third emulator, out of the way of the scripted answers. */
const SMALL_MODELS = ['claude-haiku-4-5-20251001', 'claude-haiku-4-5', 'claude-3-5-haiku-20241022'];

let h: ChatHarness;
let key: string;
let home: string;
let work: string;
beforeAll(async () => {
  const small = SMALL_MODELS.map((slug) => chatEntry(slug, 'provider_7', { provider_model_id: 'deepseek-chat', max_output_tokens: 8192, chat: { params: [], json_schema: 'instruction', images: null, pdf: false } }));
  h = await startChatHarness({ LOG_LEVEL: 'silent' }, small);
  key = (await h.gw.account({ credits: 1000 })).key;
  work = mkdtempSync(join(tmpdir(), 'claude-code-work-'));
  writeFileSync(join(work, 'hello.txt'), 'The secret word is marmalade.\n');
});
afterAll(async () => {
  await h.close();
  rmSync(work, { recursive: true, force: true });
});
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'claude-code-home-'));
  for (const emu of [h.anthropic, h.openai, h.deepseek]) emu.reset();
  h.deepseek.setDefault({ kind: 'text', text: 'Reading a file' });
});

interface ClaudeResult {
  code: number | null;
  stdout: string;
  stderr: string;
  json: { type?: string; subtype?: string; is_error?: boolean; result?: string; num_turns?: number } | undefined;
}

function claude(prompt: string, model: string): Promise<ClaudeResult> {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    ANTHROPIC_BASE_URL: `${h.gw.url}/api`,
    ANTHROPIC_API_KEY: key,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
  };
  return new Promise((resolve) => {
    execFile(CLAUDE, ['-p', prompt, '--output-format', 'json', '--model', model, '--max-turns', '3'], { env, cwd: work, timeout: 120_000 }, (error, stdout, stderr) => {
      let json: ClaudeResult['json'];
      try {
        json = JSON.parse(stdout) as ClaudeResult['json'];
      } catch {
        json = undefined;
      }
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr, json });
      rmSync(home, { recursive: true, force: true });
    });
  });
}

/** The requests a model's emulator received for the main conversation (Claude Code's own small tasks go elsewhere). */
const conversation = (emu: Emulator) => emu.requests.filter((r) => r.method === 'POST');

const ROWS = [
  { name: 'provider_2 (passthrough)', model: 'claude-test', emulator: (x: ChatHarness) => x.anthropic },
  { name: 'provider_1 (translated)', model: 'gpt-test', emulator: (x: ChatHarness) => x.openai },
];

describe.each(ROWS)('Claude Code through the gateway on $name', ({ model, emulator }) => {
  it('finishes a one-shot prompt', async () => {
    emulator(h).setDefault({ kind: 'text', text: 'Hello from the gateway.' });
    const run = await claude('Say hello.', model);
    expect(run.json, `${run.stdout}\n${run.stderr}`).toMatchObject({ type: 'result', subtype: 'success', is_error: false, result: 'Hello from the gateway.' });
    expect(conversation(emulator(h)).length).toBeGreaterThan(0);
  }, 150_000);

  it('finishes a tool-use turn: Read runs, its result goes back, the answer follows', async () => {
    const emu = emulator(h);
    emu.enqueue({ kind: 'tool_calls', calls: [{ name: 'Read', arguments: { file_path: join(work, 'hello.txt') } }] });
    emu.setDefault({ kind: 'text', text: 'The secret word is marmalade.' });
    const run = await claude('What is the secret word in hello.txt?', model);
    expect(run.json, `${run.stdout}\n${run.stderr}`).toMatchObject({ type: 'result', subtype: 'success', is_error: false, result: 'The secret word is marmalade.' });
    // The tool's result (the file's text) reached the provider in the next request.
    const texts = conversation(emu).map((r) => r.rawBody);
    expect(texts.some((t) => t.includes('marmalade'))).toBe(true);
    expect(run.json?.num_turns).toBeGreaterThanOrEqual(2);
  }, 150_000);
});
