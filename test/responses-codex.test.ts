/**
 * Codex CLI (@openai/codex, its native binary), unchanged, through the gateway's Responses route:
 * `codex exec --json --skip-git-repo-check` with a throw-away HOME and a CODEX_HOME/config.toml naming
 * the gateway as a custom model provider (the README's block), on a provider_1 model (native) and a
 * provider_2 and a provider_3 model (translated): a one-shot prompt, and a turn where the model runs a shell command
 * through Codex's own `exec_command` tool and answers from its output. The user sees the answer, is
 * charged exactly, and every request is a job.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chatEntry } from './fixtures/catalog.ts';
import { costMicro, runCodex, startClientsHarness, type ClientsHarness } from './helpers/responses-clients.ts';

let h: ClientsHarness;
beforeAll(async () => {
  // Slugs Codex knows (it then sends its "code mode" tools): one on provider_1, one deployed on provider_2.
  h = await startClientsHarness([
    chatEntry('gpt-6-luna', 'provider_1'),
    chatEntry('gpt-6.1-sol', 'provider_2', { provider_model_id: 'claude-sonnet-5-5-test', max_output_tokens: 64000, chat: { params: [], reasoning: true, json_schema: 'native', images: null, pdf: false } }),
  ]);
});
afterAll(async () => h.close());
beforeEach(() => {
  h.openai.reset();
  h.anthropic.reset();
  h.gemini.reset();
});

const MODELS = [
  { model: 'gpt-test', upstream: 'openai' },
  { model: 'claude-test', upstream: 'anthropic' },
  { model: 'gemini-test', upstream: 'gemini' },
] as const;

describe.each(MODELS)('Codex CLI on $model ($upstream)', ({ model, upstream }) => {
  it('answers a one-shot prompt', async () => {
    h[upstream].enqueue({ kind: 'text', text: 'Hello from the gateway, Codex.', usage: { input: 3200, output: 9 } });
    const before = await h.balance();
    const seen = await h.jobIds();
    const run = await runCodex(h.baseUrl, h.key, model, 'Say hello');
    expect(run.code, run.stderr).toBe(0);
    expect(run.messages).toEqual(['Hello from the gateway, Codex.']);
    expect(run.events.at(-1)).toMatchObject({ type: 'turn.completed', usage: { input_tokens: 3200, output_tokens: 9 } });
    expect(h[upstream].requests).toHaveLength(1);
    // Its default web_search tool is dropped (the gateway cannot price it); its function tools reach the provider.
    const sent = JSON.stringify(h[upstream].requests[0]?.body);
    expect(sent).not.toContain('web_search');
    expect(sent).toContain('exec_command');
    expect(await h.balance()).toBe(before - costMicro(3200, 9));
    const jobs = await h.newJobs(seen);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ status: 'succeeded', model, cost_credits: costMicro(3200, 9) / 1e6 });
    expect(jobs[0]?.usage).toMatchObject({ prompt_tokens: 3200, completion_tokens: 9 });
  });

  it('runs a shell command through its exec_command tool and answers from the output', async () => {
    h[upstream].enqueue({ kind: 'tool_calls', calls: [{ name: 'exec_command', arguments: { cmd: 'echo hi-from-codex' } }], usage: { input: 3300, output: 20 } });
    h[upstream].enqueue({ kind: 'text', text: 'The command printed hi-from-codex.', usage: { input: 3500, output: 8 } });
    const before = await h.balance();
    const seen = await h.jobIds();
    const run = await runCodex(h.baseUrl, h.key, model, 'Run echo hi-from-codex and tell me what it printed');
    expect(run.code, run.stderr).toBe(0);
    const command = run.events.find((e) => e.type === 'item.completed' && e.item?.type === 'command_execution')?.item;
    expect(command).toMatchObject({ aggregated_output: 'hi-from-codex\n', exit_code: 0, status: 'completed' });
    expect(command?.command).toContain('echo hi-from-codex');
    expect(run.messages).toEqual(['The command printed hi-from-codex.']);
    // The command's output went back to the model on the second request.
    expect(h[upstream].requests).toHaveLength(2);
    expect(JSON.stringify(h[upstream].requests[1]?.body)).toContain('hi-from-codex');
    expect(await h.balance()).toBe(before - costMicro(3300, 20) - costMicro(3500, 8));
    const jobs = await h.newJobs(seen);
    expect(jobs.map((j) => [j.status, j.model, j.cost_credits])).toEqual([
      ['succeeded', model, costMicro(3300, 20) / 1e6],
      ['succeeded', model, costMicro(3500, 8) / 1e6],
    ]);
  });
});

it('Codex on a reasoning model (provider_1, native): the reasoning summary shows, and the item goes back with its encrypted content', async () => {
  h.openai.enqueue({ kind: 'tool_calls', reasoning: 'I should run echo.', calls: [{ name: 'exec_command', arguments: { cmd: 'echo hi-reasoning' } }], usage: { input: 3300, output: 25, reasoning: 5 } });
  h.openai.enqueue({ kind: 'text', text: 'It printed hi-reasoning.', usage: { input: 3500, output: 8 } });
  const before = await h.balance();
  const run = await runCodex(h.baseUrl, h.key, 'gpt-reasoner', 'Run echo hi-reasoning');
  expect(run.code, run.stderr).toBe(0);
  expect(run.events.find((e) => e.item?.type === 'reasoning')?.item?.text).toBe('I should run echo.');
  expect(run.messages).toEqual(['It printed hi-reasoning.']);
  // Codex asked for encrypted reasoning (store is false): the item it sends back is whole, so provider_1 takes it.
  const second = h.openai.requests[1]?.body as { store: boolean; input: { type?: string; encrypted_content?: string }[] };
  expect(second.store).toBe(false);
  expect(second.input.find((i) => i.type === 'reasoning')?.encrypted_content).toMatch(/^gAAAAA/);
  expect(await h.balance()).toBe(before - costMicro(3300, 25) - costMicro(3500, 8));
});

// For a model it knows, Codex 0.169 groups its tools in namespaces (`functions`, `clock`, `collaboration`) and runs
// commands through `exec`, a custom tool whose input is JavaScript (a lark grammar) calling nested tools.
describe.each([
  { model: 'gpt-6-luna', upstream: 'openai', offered: 'exec' },
  { model: 'gpt-6.1-sol', upstream: 'anthropic', offered: 'functions__exec' },
] as const)('Codex code mode on $model ($upstream)', ({ model, upstream, offered }) => {
  it('its custom exec tool (in a namespace) runs a nested exec_command, and the script output goes back', async () => {
    const script = 'const r = await tools.exec_command({ cmd: "echo hi-code-mode" });\ntext(r);';
    // The provider is offered the tool as its protocol names it: natively `exec` in the namespace, translated `<namespace>__<name>`.
    h[upstream].enqueue({ kind: 'tool_calls', calls: [{ name: offered, arguments: { input: script } }], usage: { input: 3300, output: 30 } });
    h[upstream].enqueue({ kind: 'text', text: 'The script printed hi-code-mode.', usage: { input: 3500, output: 8 } });
    const before = await h.balance();
    const run = await runCodex(h.baseUrl, h.key, model, 'Run echo hi-code-mode');
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.stringify(h[upstream].requests[0]?.body)).toContain('Run JavaScript code to orchestrate/compose tool calls');
    const command = run.events.find((e) => e.type === 'item.completed' && e.item?.type === 'command_execution')?.item;
    expect(command).toMatchObject({ aggregated_output: 'hi-code-mode\n', exit_code: 0 });
    expect(run.messages).toEqual(['The script printed hi-code-mode.']);
    const second = JSON.stringify(h[upstream].requests[1]?.body);
    expect(second).toContain('Script completed');
    expect(second).toContain('hi-code-mode');
    expect(await h.balance()).toBe(before - costMicro(3300, 30) - costMicro(3500, 8));
  });
});
