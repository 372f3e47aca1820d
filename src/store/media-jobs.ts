/**
 * What the media job runner keeps beside a job's money row (the `jobs` row the hold
 * created): the plan it settles by, the host's prediction ids once the host took the run,
 * and the run's report (output URLs, usage, error) for GET /jobs/{id}.
 * A running job WITH prediction ids is resumed by the next gateway process, never
 * refunded as an orphan (docs/decisions.md "Media jobs").
 */

/** A media job's record. JSON values are stored as text. */
export interface MediaJobRecord {
  jobId: string;
  /** The settlement plan the job was admitted with (the runner's own JSON). */
  plan: unknown;
  /** The host's prediction ids; empty until the host answered the create call(s). */
  predictionIds: string[];
  /** Output URLs, once the run delivered them. */
  outputs: string[] | null;
  /** Usage in the units billed (images, videos, output_seconds, gpu_seconds, …). */
  usage: Record<string, number> | null;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: number;
  updatedAt: number;
}

/** A job handed to this process to resume: its record plus what its money row says. */
export interface AdoptedMediaJob {
  record: MediaJobRecord;
  /** The amount held (micro-credits): the resumed run's quote. */
  held: number;
  /** When the job was admitted (its deadline counts from here). */
  admittedAt: number;
}

export interface MediaJobOutcome {
  outputs: string[] | null;
  usage: Record<string, number> | null;
  errorCode: string | null;
  errorMessage: string | null;
}

export interface MediaJobStore {
  /** Right after the hold: the job's plan. */
  create(jobId: string, plan: unknown, at: number): Promise<void>;
  /** The host took the run: from now on the job is resumed, not refunded, when its process dies. */
  markProcessing(jobId: string, predictionIds: string[], at: number): Promise<void>;
  /** The run's report, written before its settle or refund. */
  recordOutcome(jobId: string, outcome: MediaJobOutcome, at: number): Promise<void>;
  get(jobId: string): Promise<MediaJobRecord | undefined>;
  /**
   * Moves the running media jobs with prediction ids of gone processes to `owner` (one
   * conditional update: two processes never adopt the same job), and returns every such
   * job `owner` now holds, for it to resume. With `ownerLeaseExpiredAt` (the database's clock), only
   * jobs whose owner's lease had run out by then (or whose owner has no row) move.
   */
  adopt(goneInstanceIds: string[], owner: string, ownerLeaseExpiredAt?: number): Promise<AdoptedMediaJob[]>;
}
