/**
 * Real Responses clients through the gateway against the emulators: the chat harness (provider_1
 * native on its Responses endpoint, provider_2/3/7 translated), an account read to the micro-credit,
 * the job records of its runs, and Codex CLI run as a user runs it (a throw-away HOME and CODEX_HOME).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { JobView } from '../../src/jobs/job-view.ts';
import type { Entry } from '../fixtures/catalog.ts';
import { money, startChatHarness, type ChatHarness } from './chat.ts';

export { costMicro } from './chat.ts';

export interface ClientsHarness extends ChatHarness {
  accountId: string;
  key: string;
  /** The gateway's base URL as every client takes it: `…/api/v1`. */
  baseUrl: string;
  balance(): Promise<number>;
  /** The job of a response id (`resp_<job id>`) once settled, as `GET /api/v1/jobs/{id}` shows it. */
  job(responseId: string): Promise<JobView>;
  /** The account's jobs not in `seen`, settled, cheapest first (Codex shows no response id). */
  newJobs(seen: Set<string>): Promise<JobView[]>;
  /** The ids of the account's jobs so far. */
  jobIds(): Promise<Set<string>>;
}

/** `extraModels`: catalog rows beside the chat fixtures (test/helpers/chat.ts). */
export async function startClientsHarness(extraModels: Entry[] = []): Promise<ClientsHarness> {
  const h = await startChatHarness({}, extraModels);
  const { accountId, key } = await h.gw.account({ credits: 100 });
  const settled = async (jobId: string): Promise<JobView> => {
    // The run settles as its answer ends; a few reads cover a stream's settlement racing the client's last read.
    for (let i = 0; i < 100; i++) {
      const r = await h.gw.api(`/jobs/${jobId}`, { key });
      if (r.status === 200 && r.json.status !== 'processing') return r.json as unknown as JobView;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`job ${jobId} never settled`);
  };
  return {
    ...h,
    accountId,
    key,
    baseUrl: `${h.gw.url}/api/v1`,
    balance: async () => (await money(h.gw, accountId)).balance,
    job: (responseId) => settled(responseId.replace(/^resp_/, '')),
    async newJobs(seen) {
      const records = await h.gw.gateway.store.jobs.listJobs(accountId, { limit: 100 });
      const jobs = await Promise.all(records.filter((j) => !seen.has(j.id)).map((j) => settled(j.id)));
      return jobs.sort((a, b) => (a.cost_credits ?? 0) - (b.cost_credits ?? 0));
    },
    jobIds: async () => new Set((await h.gw.gateway.store.jobs.listJobs(accountId, { limit: 100 })).map((j) => j.id)),
  };
}

// ---------------------------------------------------------------------------
// Codex CLI

/** One line of `codex exec --json`. */
export interface CodexEvent {
  type: string;
  item?: { id: string; type: string; text?: string; command?: string; aggregated_output?: string; exit_code?: number | null; status?: string; message?: string };
  usage?: Record<string, number>;
  error?: { message: string };
}

export interface CodexRun {
  code: number | null;
  events: CodexEvent[];
  stderr: string;
  /** The agent's messages, in order. */
  messages: string[];
}

const codexBin = join(dirname(createRequire(import.meta.url).resolve('@openai/codex/package.json')), 'bin', 'codex.js');

/** The config.toml the README shows: a custom model provider at the gateway, speaking Responses, kept off every other network. */
export function codexConfig(baseUrl: string, model: string): string {
  return `model = "${model}"
model_provider = "gateway"
approval_policy = "never"
sandbox_mode = "read-only"

[model_providers.gateway]
name = "Model Gateway"
base_url = "${baseUrl}"
wire_api = "responses"
env_key = "MODEL_GATEWAY_API_KEY"

[analytics]
enabled = false

[features]
plugins = false
`;
}

/** Runs `codex exec --json --skip-git-repo-check <prompt>` in a throw-away HOME, CODEX_HOME and working directory. */
export async function runCodex(baseUrl: string, key: string, model: string, prompt: string): Promise<CodexRun> {
  const home = mkdtempSync(join(tmpdir(), 'codex-home-'));
  try {
    const codexHome = join(home, '.codex');
    const work = join(home, 'work');
    mkdirSync(codexHome);
    mkdirSync(work);
    writeFileSync(join(codexHome, 'config.toml'), codexConfig(baseUrl, model));
    const child = spawn(process.execPath, [codexBin, 'exec', '--json', '--skip-git-repo-check', prompt], {
      cwd: work,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, CODEX_HOME: codexHome, MODEL_GATEWAY_API_KEY: key },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const events = out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as CodexEvent);
    const messages = events.flatMap((e) => (e.type === 'item.completed' && e.item?.type === 'agent_message' ? [e.item.text ?? ''] : []));
    return { code, events, stderr, messages };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
