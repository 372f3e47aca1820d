/**
 * Voice samples uploaded through POST /audio/uploads: the bytes live in the store (so every
 * gateway process can serve them) with their owner, an unguessable secret and an expiry;
 * GET /audio/uploads/<id>/<secret> serves them until then, and a sweep deletes them after.
 */

export interface AudioUploadRecord {
  id: string;
  /** base64url; compared in constant time. */
  secret: string;
  accountId: string;
  keyId: string | null;
  contentType: string;
  bytes: Buffer;
  durationSeconds: number;
  createdAt: number;
  expiresAt: number;
}

export interface AudioUploadStore {
  create(upload: AudioUploadRecord): Promise<void>;
  get(id: string): Promise<AudioUploadRecord | undefined>;
  /** Deletes every upload expired at `now`; how many. */
  deleteExpired(now: number): Promise<number>;
}
