/**
 * Secret → key record, without a database query once a key is cached.
 * Entries are dropped at once when a key changes (KeyEvents); unknown secrets are
 * remembered too (bounded), so a flood of bad keys does not reach the database. A key's
 * creation only forgets that its hash was unknown: its announcement may reach another
 * process after that process has already read and cached the new key.
 * While key events are not live (Redis away) nothing is cached: every key is read
 * from the database, so a key changed by another process is never served stale.
 */
import type { KeyEvents } from '../keys/key-events.ts';
import { hashKeySecret } from '../keys/key-secret.ts';
import type { ApiKeyRecord, KeyStore } from '../store/types.ts';
import { parseAddressList, type AddressMatcher } from './address-match.ts';

export interface ResolvedKey {
  record: ApiKeyRecord;
  /** Parsed allowlist; undefined when the key allows every address. */
  allowlist: AddressMatcher | undefined;
}

const MAX_UNKNOWN = 10_000;

export class KeyCache {
  private readonly known = new Map<string, ResolvedKey>();
  private readonly unknown = new Set<string>();
  private readonly pending = new Map<string, Promise<ResolvedKey | undefined>>();
  /** Bumped on every change to a key, so a lookup that raced a change does not cache a stale record. */
  private generation = 0;
  /** Bumped on every key created, so a lookup that raced a creation does not remember the hash as unknown. */
  private creations = 0;

  constructor(
    private readonly store: Pick<KeyStore, 'findKeyByHash'>,
    private readonly events: KeyEvents,
  ) {
    events.subscribe((change) => {
      if (change.kind === 'created') {
        this.creations++;
        this.unknown.delete(change.hash);
        return;
      }
      this.generation++;
      this.known.delete(change.hash);
      this.unknown.delete(change.hash);
    });
    // Changes may have been missed while the events were down: start again from empty.
    events.onLiveChange(() => {
      this.generation++;
      this.creations++;
      this.known.clear();
      this.unknown.clear();
    });
  }

  /** The key for a well-formed secret, or undefined when no key has it (revoked and expired keys are returned). */
  async resolve(secret: string): Promise<ResolvedKey | undefined> {
    const hash = hashKeySecret(secret);
    if (!this.events.live) return this.read(hash);
    const hit = this.known.get(hash);
    if (hit !== undefined) return hit;
    if (this.unknown.has(hash)) return undefined;
    let lookup = this.pending.get(hash);
    if (lookup === undefined) {
      lookup = this.load(hash).finally(() => this.pending.delete(hash));
      this.pending.set(hash, lookup);
    }
    return lookup;
  }

  private async load(hash: string): Promise<ResolvedKey | undefined> {
    const generation = this.generation;
    const creations = this.creations;
    const record = await this.store.findKeyByHash(hash);
    if (generation !== this.generation) {
      // A key changed meanwhile: answer from a fresh read, cache nothing.
      return this.read(hash);
    }
    if (record === undefined && creations !== this.creations) {
      // A key was created meanwhile, perhaps this one: read again rather than remember the hash as unknown.
      return this.read(hash);
    }
    if (record === undefined) {
      if (this.unknown.size >= MAX_UNKNOWN) this.unknown.clear();
      this.unknown.add(hash);
      return undefined;
    }
    const resolved = { record, allowlist: compileAllowlist(record.ipAllowlist) };
    this.known.set(hash, resolved);
    return resolved;
  }

  /** Straight from the database, cached nowhere. */
  private async read(hash: string): Promise<ResolvedKey | undefined> {
    const record = await this.store.findKeyByHash(hash);
    return record === undefined ? undefined : { record, allowlist: compileAllowlist(record.ipAllowlist) };
  }
}

function compileAllowlist(entries: string[]): AddressMatcher | undefined {
  if (entries.length === 0) return undefined;
  const parsed = parseAddressList(entries);
  // Entries were validated at creation; an unreadable stored list refuses every address.
  return parsed.ok ? parsed.matcher : { matches: () => false };
}
