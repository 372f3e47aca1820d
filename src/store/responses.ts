/**
 * Stored responses of the Responses route (DECISIONS "Agent formats: the Responses route"):
 * customer content, kept per account until it expires (RESPONSES_RETENTION_DAYS), deleted
 * by a sweep after. Each record keeps its own input items, output and answer as JSON text;
 * a conversation is the chain of records through `previousId`.
 */

export interface StoredResponseRecord {
  /** `resp_` + the job id. */
  id: string;
  accountId: string;
  /** The response this one continued. */
  previousId: string | null;
  /** JSON: this request's own input items. */
  input: string;
  /** JSON: the output items. */
  output: string;
  /** JSON: the response object as answered. */
  response: string;
  createdAt: number;
  expiresAt: number;
}

export interface ResponseStore {
  create(record: StoredResponseRecord): Promise<void>;
  /** The account's response, unexpired at `now`. */
  get(id: string, accountId: string, now: number): Promise<StoredResponseRecord | undefined>;
  /**
   * The response and the ones it continues, oldest first, as far as the chain of the account's
   * unexpired responses goes (at most `depth`): a chain that stops at a missing link starts with
   * a record whose `previousId` is not null.
   */
  chain(id: string, accountId: string, now: number, depth: number): Promise<StoredResponseRecord[]>;
  /** Deletes the account's response; whether there was one. */
  delete(id: string, accountId: string): Promise<boolean>;
  /** Deletes every response expired at `now`; how many. */
  deleteExpired(now: number): Promise<number>;
}
