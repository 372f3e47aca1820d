/**
 * GET /api/v1/jobs/{id}: the job record, never the vectors or any secret.
 * Scope: `jobs` reaches every job of the account; without it a key polls only jobs of
 * a kind it may create (a chat key its chat jobs), else 403 insufficient_scope naming
 * `jobs` (DECISIONS.md). The gate checks key and IP; the scope is decided here, once the
 * job is known, and only then is the request counted (a 403 for scope is not). Another
 * account's job → 403 forbidden; an unknown id → 404 job_not_found. No rate-limit
 * headers (only on the 429).
 */
import type { FastifyInstance } from 'fastify';
import type { AccessGate } from '../gate/access-gate.ts';
import type { Scope } from '../shared/scopes.ts';
import { GatewayError, invalidApiKey } from '../shared/errors.ts';
import type { JobKind } from '../store/money-contract.ts';
import type { JobStore } from '../store/types.ts';
import { jobView } from './job-view.ts';

export interface JobsRouteDeps {
  jobs: Pick<JobStore, 'getJob'>;
  gate: AccessGate;
}

/** The scope that creates each kind of job. */
const KIND_SCOPE: Record<JobKind, Scope> = {
  chat: 'chat',
  messages: 'chat',
  embeddings: 'embeddings',
  image: 'images',
  video: 'video',
  speech: 'audio',
  transcription: 'audio',
  fine_tuning: 'fine_tuning',
};

/** Scopes that create some kind of job: a key with none of them (nor `jobs`) polls nothing. */
const CREATING_SCOPES: readonly Scope[] = [...new Set(Object.values(KIND_SCOPE))];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function registerJobsRoute(app: FastifyInstance, deps: JobsRouteDeps): void {
  app.get('/api/v1/jobs/:id', {
    config: { access: { scope: 'route', auth: 'required', rateHeaders: 'never' } },
  }, async (request) => {
    const keyPass = request.keyPass;
    if (keyPass === undefined) throw invalidApiKey();
    const { id } = request.params as { id: string };
    const job = UUID.test(id) ? await deps.jobs.getJob(id.toLowerCase()) : undefined;
    const own = job !== undefined && job.accountId === keyPass.key.record.accountId;
    // Own job: `jobs` or its kind's scope. Unknown, or another account's (whose kind is not told): `jobs` or any creating scope.
    const kindScope = own ? KIND_SCOPE[job.kind as JobKind] : undefined;
    await deps.gate.admit(keyPass, 'jobs', own ? (kindScope === undefined ? [] : [kindScope]) : CREATING_SCOPES);
    if (job === undefined) throw new GatewayError('job_not_found', `No job has the id '${id}'.`);
    if (!own) throw new GatewayError('forbidden', 'This job belongs to another account.');
    return jobView(job);
  });
}
