/**
 * provider_1 files and fine-tuning (reference/providers.md §8), beside its chat and embeddings:
 *   POST /v1/files                               multipart `purpose=fine-tune`, `file` (JSONL)
 *   POST /v1/fine_tuning/jobs                    {model, training_file, validation_file?, hyperparameters?, suffix?, seed?}
 *   GET  /v1/fine_tuning/jobs/{id}               the job object
 *   POST /v1/fine_tuning/jobs/{id}/cancel
 *   GET  /v1/fine_tuning/jobs/{id}/events        newest first (`after`, `limit`)
 *   GET  /v1/fine_tuning/jobs/{id}/checkpoints   newest first (`after`, `limit`)
 * A job follows the clock, scripted by the scenario taken at its creation (`fine_tuning`):
 * `validating_files` for one step, `queued` for one step, then `running` for epochs × steps
 * per epoch, each step `stepMs` long, trained tokens growing with the steps done; then
 * `succeeded` (or `failed`). A training file that is not JSONL chat examples fails the job
 * at validation, as the real API does. Cancel freezes it where it is (`cancelled`).
 */
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import type { Exchange, Picked, Reply } from './core.ts';
import type { FineTuningScenario, Scenario } from './types.ts';
import { isRecord, randomId } from './util.ts';

type Status = 'validating_files' | 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

interface StoredFile {
  id: string;
  filename: string;
  content: string;
  createdAt: number;
}

interface Job {
  id: string;
  model: string;
  trainingFile: string;
  validationFile: string | null;
  suffix: string | null;
  seed: number;
  epochs: number;
  batchSize: number;
  learningRate: number;
  createdAt: number;
  stepMs: number;
  stepsPerEpoch: number;
  /** Trained tokens of the whole run (file tokens × epochs unless scripted). */
  totalTokens: number;
  /** The run fails at this step with `fail` (0: at validation). */
  failAtStep: number | undefined;
  fail: { code: string; message: string; param: string | null } | undefined;
  cancelledAt: number | undefined;
}

export const DEFAULT_STEP_MS = 20;
export const DEFAULT_STEPS_PER_EPOCH = 4;
/** The emulator's own choice for `n_epochs: "auto"` or none (the gateway always sends a number). */
const AUTO_EPOCHS = 3;

/** Tokens one chat example trains on: each message's content plus 4 tokens of framing. */
export function exampleTokens(example: unknown): number | undefined {
  if (!isRecord(example) || !Array.isArray(example.messages) || example.messages.length === 0) return undefined;
  let tokens = 0;
  for (const m of example.messages) {
    if (!isRecord(m) || typeof m.role !== 'string') return undefined;
    tokens += 4 + (typeof m.content === 'string' ? countTokens(m.content) : 0);
  }
  return tokens;
}

/** Σ tokens of a JSONL file of chat examples; a reason when it is not one. */
function fileTokens(content: string): number | string {
  let total = 0;
  let examples = 0;
  for (const [i, line] of content.split('\n').entries()) {
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return `Invalid file format. Line ${i + 1} is not valid JSON.`;
    }
    const tokens = exampleTokens(parsed);
    if (tokens === undefined) return `Invalid file format. Example ${i + 1} has no valid 'messages'.`;
    total += tokens;
    examples += 1;
  }
  return examples === 0 ? 'Invalid file format. The file has no examples.' : total;
}

const seconds = (ms: number) => Math.floor(ms / 1000);

interface Progress {
  status: Status;
  /** Training steps done (0 before running). */
  steps: number;
  /** When the job ended (ms), if it has. */
  endedAt: number | undefined;
}

function totalSteps(job: Job): number {
  return job.epochs * job.stepsPerEpoch;
}

function progressAt(job: Job, at: number): Progress {
  const t = job.cancelledAt !== undefined && job.cancelledAt < at ? job.cancelledAt : at;
  const runStart = job.createdAt + 2 * job.stepMs;
  const failStep = job.failAtStep;
  if (failStep === 0 && t >= job.createdAt + job.stepMs) return { status: 'failed', steps: 0, endedAt: job.createdAt + job.stepMs };
  const steps = Math.min(totalSteps(job), Math.max(0, Math.floor((t - runStart) / job.stepMs)));
  if (failStep !== undefined && failStep > 0 && steps >= failStep) return { status: 'failed', steps: failStep, endedAt: runStart + failStep * job.stepMs };
  const cancelled = job.cancelledAt !== undefined && job.cancelledAt < at;
  if (!cancelled && steps >= totalSteps(job)) return { status: 'succeeded', steps, endedAt: runStart + steps * job.stepMs };
  const status: Status = cancelled ? 'cancelled' : t < job.createdAt + job.stepMs ? 'validating_files' : t < runStart ? 'queued' : 'running';
  return { status, steps, endedAt: cancelled ? job.cancelledAt : undefined };
}

function trainedTokens(job: Job, steps: number): number {
  return Math.floor((job.totalTokens * steps) / totalSteps(job));
}

function fineTunedModel(job: Job, ckptStep?: number): string {
  const base = `ft:${job.model}:emulator:${job.suffix ?? ''}:${job.id.slice(6, 14)}`;
  return ckptStep === undefined ? base : `${base}:ckpt-step-${ckptStep}`;
}

function jobView(job: Job, at: number): Record<string, unknown> {
  const p = progressAt(job, at);
  const hyperparameters = { n_epochs: job.epochs, batch_size: job.batchSize, learning_rate_multiplier: job.learningRate };
  const ended = p.status === 'succeeded' || p.status === 'failed' || p.status === 'cancelled';
  return {
    object: 'fine_tuning.job',
    id: job.id,
    model: job.model,
    created_at: seconds(job.createdAt),
    finished_at: ended && p.endedAt !== undefined ? seconds(p.endedAt) : null,
    fine_tuned_model: p.status === 'succeeded' ? fineTunedModel(job) : null,
    organization_id: 'org-emulator',
    result_files: p.status === 'succeeded' ? [`file-result-${job.id.slice(6, 14)}`] : [],
    status: p.status,
    validation_file: job.validationFile,
    training_file: job.trainingFile,
    hyperparameters,
    trained_tokens: p.status === 'validating_files' || p.status === 'queued' || (p.status === 'failed' && p.steps === 0) ? null : trainedTokens(job, p.steps),
    error: p.status === 'failed' ? (job.fail ?? { code: 'server_error', message: 'Fine-tuning failed (emulated).', param: null }) : null,
    seed: job.seed,
    estimated_finish: null,
    integrations: [],
    user_provided_suffix: job.suffix,
    method: { type: 'supervised', supervised: { hyperparameters } },
    metadata: null,
  };
}

interface Event {
  id: string;
  created_at: number;
  level: 'info' | 'warn' | 'error';
  message: string;
  type: 'message' | 'metrics';
  data: Record<string, unknown> | null;
}

/** Every event so far, oldest first. */
function eventsOf(job: Job, at: number): Event[] {
  const p = progressAt(job, at);
  const out: Event[] = [];
  const add = (ms: number, message: string, level: Event['level'] = 'info', data: Record<string, unknown> | null = null) =>
    out.push({ id: `ftevent-${job.id.slice(6)}-${out.length}`, created_at: seconds(ms), level, message, type: data === null ? 'message' : 'metrics', data });
  add(job.createdAt, `Created fine-tuning job: ${job.id}`);
  add(job.createdAt, `Validating training file: ${job.trainingFile}`);
  if (job.failAtStep === 0 && p.status === 'failed') {
    add(p.endedAt ?? at, `Training file ${job.trainingFile} failed validation: ${job.fail?.message ?? ''}`, 'error');
    return out;
  }
  const validated = job.createdAt + job.stepMs;
  if (at >= validated && (job.cancelledAt === undefined || job.cancelledAt >= validated)) add(validated, 'Files validated, moving job to queued state');
  const runStart = job.createdAt + 2 * job.stepMs;
  if (at >= runStart && (job.cancelledAt === undefined || job.cancelledAt >= runStart)) add(runStart, 'Fine-tuning job started');
  for (let step = 1; step <= p.steps; step++) {
    const when = runStart + step * job.stepMs;
    add(when, `Step ${step}/${totalSteps(job)}: training loss=${(1 / (1 + step)).toFixed(4)}`, 'info', { step, train_loss: 1 / (1 + step), total_steps: totalSteps(job) });
    if (step % job.stepsPerEpoch === 0) add(when, `Checkpoint created at step ${step}`);
  }
  if (p.status === 'succeeded') {
    add(p.endedAt ?? at, `New fine-tuned model created: ${fineTunedModel(job)}`);
    add(p.endedAt ?? at, 'The job has successfully completed');
  } else if (p.status === 'failed') {
    add(p.endedAt ?? at, `Fine-tuning failed: ${job.fail?.message ?? ''}`, 'error');
  } else if (p.status === 'cancelled') {
    add(p.endedAt ?? at, 'The job has been cancelled');
  }
  return out;
}

function checkpointsOf(job: Job, at: number): Record<string, unknown>[] {
  const p = progressAt(job, at);
  const runStart = job.createdAt + 2 * job.stepMs;
  const out: Record<string, unknown>[] = [];
  for (let step = job.stepsPerEpoch; step <= p.steps; step += job.stepsPerEpoch) {
    out.push({
      object: 'fine_tuning.job.checkpoint',
      id: `ftckpt_${job.id.slice(6, 20)}${step}`,
      created_at: seconds(runStart + step * job.stepMs),
      fine_tuned_model_checkpoint: fineTunedModel(job, step),
      fine_tuning_job_id: job.id,
      step_number: step,
      metrics: { step, train_loss: 1 / (1 + step), train_mean_token_accuracy: 0.5 + step / (2 * totalSteps(job)) },
    });
  }
  return out;
}

/** A page of a newest-first list: `after` is the id of the last item already seen. */
function page<T extends Record<string, unknown>>(newestFirst: T[], search: string, defaultLimit: number): { object: 'list'; data: T[]; has_more: boolean } {
  const query = new URLSearchParams(search);
  const after = query.get('after');
  const limit = Math.max(1, Math.min(100, Number(query.get('limit') ?? defaultLimit) || defaultLimit));
  const from = after === null ? 0 : newestFirst.findIndex((item) => item.id === after) + 1;
  const data = newestFirst.slice(from, from + limit);
  return { object: 'list', data, has_more: from + limit < newestFirst.length };
}

// ---------------------------------------------------------------------------
// Multipart (the files upload): enough of RFC 7578 for what clients send.

interface Part {
  name: string;
  filename: string | undefined;
  body: string;
}

function multipartParts(ex: Exchange): Part[] | undefined {
  const type = ex.headers['content-type'] ?? '';
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(type);
  if (!type.toLowerCase().startsWith('multipart/form-data') || boundary === null) return undefined;
  const marker = `--${boundary[1] ?? boundary[2] ?? ''}`;
  const parts: Part[] = [];
  for (const chunk of ex.raw.split(marker).slice(1)) {
    if (chunk.startsWith('--')) break;
    const split = chunk.indexOf('\r\n\r\n');
    if (split === -1) continue;
    const head = chunk.slice(0, split);
    const body = chunk.slice(split + 4).replace(/\r\n$/, '');
    const name = /name="([^"]*)"/i.exec(head)?.[1];
    if (name === undefined) continue;
    parts.push({ name, filename: /filename="([^"]*)"/i.exec(head)?.[1], body });
  }
  return parts;
}

// ---------------------------------------------------------------------------

const FILES = '/v1/files';
const JOBS = '/v1/fine_tuning/jobs';
const JOB = /^\/v1\/fine_tuning\/jobs\/([^/]+)(?:\/(cancel|events|checkpoints))?$/;

export interface FineTuningWire {
  /** The provider's error reply for a scripted `error` scenario. */
  scenarioError(s: Extract<Scenario, { kind: 'error' }>, model: string, picked: Picked): Reply;
  invalid(status: number, message: string, param: string | null, code: string | null): Reply;
  ok(body: unknown): Reply;
}

/** The files and fine-tuning routes of one emulator (its own files and jobs); undefined for other paths. */
export function fineTuningRoutes(wire: FineTuningWire): (ex: Exchange) => Reply | undefined {
  const files = new Map<string, StoredFile>();
  const jobs = new Map<string, Job>();

  const upload = (ex: Exchange): Reply => {
    const parts = multipartParts(ex);
    if (parts === undefined) return wire.invalid(400, "Invalid 'content-type' header: expected multipart/form-data.", null, null);
    const purpose = parts.find((p) => p.name === 'purpose')?.body;
    const file = parts.find((p) => p.name === 'file');
    if (file === undefined) return wire.invalid(400, "Missing required parameter: 'file'.", 'file', 'missing_required_parameter');
    if (purpose !== 'fine-tune') return wire.invalid(400, `Invalid value for 'purpose': '${String(purpose)}'.`, 'purpose', 'invalid_value');
    const stored: StoredFile = { id: `file-${randomId(24)}`, filename: file.filename ?? 'file.jsonl', content: file.body, createdAt: Date.now() };
    files.set(stored.id, stored);
    return wire.ok({ object: 'file', id: stored.id, bytes: Buffer.byteLength(stored.content), created_at: seconds(stored.createdAt), filename: stored.filename, purpose: 'fine-tune', status: 'processed', expires_at: null, status_details: null });
  };

  const create = (ex: Exchange): Reply => {
    const body = ex.body;
    if (!isRecord(body)) return wire.invalid(400, 'We could not parse the JSON body of your request.', null, null);
    if (typeof body.model !== 'string' || body.model === '') return wire.invalid(400, "Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
    const training = typeof body.training_file === 'string' ? files.get(body.training_file) : undefined;
    if (training === undefined) return wire.invalid(400, `invalid training_file: ${String(body.training_file)}`, 'training_file', null);
    const validation = body.validation_file === undefined || body.validation_file === null ? null : typeof body.validation_file === 'string' ? files.get(body.validation_file) : undefined;
    if (validation === undefined) return wire.invalid(400, `invalid validation_file: ${String(body.validation_file)}`, 'validation_file', null);
    const hp = isRecord(body.hyperparameters) ? body.hyperparameters : {};
    const epochs = typeof hp.n_epochs === 'number' ? hp.n_epochs : AUTO_EPOCHS;
    const picked = ex.take();
    const s = picked.scenario;
    if (s !== null && s.kind === 'hang') return { type: 'hang' };
    if (s !== null && s.kind === 'error') return wire.scenarioError(s, body.model, picked);
    const script: FineTuningScenario | null = s !== null && s.kind === 'fine_tuning' ? s : null;
    const tokens = fileTokens(training.content);
    const stepsPerEpoch = script?.stepsPerEpoch ?? DEFAULT_STEPS_PER_EPOCH;
    const invalidFile = typeof tokens === 'string';
    const job: Job = {
      id: `ftjob-${randomId(24)}`,
      model: body.model,
      trainingFile: training.id,
      validationFile: validation?.id ?? null,
      suffix: typeof body.suffix === 'string' ? body.suffix : null,
      seed: typeof body.seed === 'number' ? body.seed : 42,
      epochs,
      batchSize: typeof hp.batch_size === 'number' ? hp.batch_size : 1,
      learningRate: typeof hp.learning_rate_multiplier === 'number' ? hp.learning_rate_multiplier : 1.8,
      createdAt: Date.now(),
      stepMs: script?.stepMs ?? DEFAULT_STEP_MS,
      stepsPerEpoch,
      totalTokens: script?.trainedTokens ?? (invalidFile ? 0 : tokens * epochs),
      failAtStep: invalidFile ? 0 : script?.fail === undefined ? undefined : Math.max(1, Math.floor((epochs * stepsPerEpoch) / 2)),
      fail: invalidFile ? { code: 'invalid_training_file', message: tokens, param: 'training_file' } : script?.fail === undefined ? undefined : { code: 'server_error', message: script.fail, param: null },
      cancelledAt: undefined,
    };
    jobs.set(job.id, job);
    return wire.ok(jobView(job, job.createdAt));
  };

  return (ex) => {
    if (ex.pathname === FILES) return ex.method === 'POST' ? upload(ex) : wire.invalid(405, `Method ${ex.method} not allowed.`, null, null);
    if (ex.pathname === JOBS) return ex.method === 'POST' ? create(ex) : wire.ok(page([...jobs.values()].reverse().map((j) => jobView(j, Date.now())), ex.search, 20));
    const match = JOB.exec(ex.pathname);
    if (match === null) return undefined;
    const job = jobs.get(decodeURIComponent(match[1] as string));
    if (job === undefined) return wire.invalid(404, `Could not find fine-tune job: ${match[1] as string}`, 'fine_tune_id', 'fine_tune_not_found');
    const now = Date.now();
    switch (match[2]) {
      case undefined:
        return wire.ok(jobView(job, now));
      case 'cancel': {
        if (ex.method !== 'POST') return wire.invalid(405, `Method ${ex.method} not allowed.`, null, null);
        const status = progressAt(job, now).status;
        if (status === 'succeeded' || status === 'failed' || status === 'cancelled') return wire.invalid(400, `Job has already ${status === 'cancelled' ? 'been cancelled' : 'completed'}.`, null, null);
        job.cancelledAt = now;
        return wire.ok(jobView(job, now + 1));
      }
      case 'events':
        return wire.ok(page(eventsOf(job, now).reverse().map((e): Record<string, unknown> => ({ object: 'fine_tuning.job.event', ...e })), ex.search, 20));
      default:
        return wire.ok(page(checkpointsOf(job, now).reverse(), ex.search, 10));
    }
  };
}
