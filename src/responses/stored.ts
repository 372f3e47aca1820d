/**
 * Stored responses (DECISIONS "Agent formats: the Responses route"): with `store` (the
 * default) a completed or incomplete response and its own input items are kept for
 * RESPONSES_RETENTION_DAYS; `previous_response_id` continues one (its conversation's items
 * come before the new input); GET, GET input_items and DELETE reach the key's own account's.
 * An unknown, deleted, expired, unstored or other account's id is 404 response_not_found,
 * never telling which. The content is customer data: never logged; a sweep deletes it at expiry.
 */
import type { FastifyInstance } from 'fastify';
import { GatewayError, invalidApiKey } from '../shared/errors.ts';
import type { ResponseStore, StoredResponseRecord } from '../store/responses.ts';
import type { Json } from '../chat/chat-request.ts';
import type { InputItem } from './input-items.ts';
import { itemId, responseView, type ResponseIdentity, type ResponseState } from './response-view.ts';

const DAY_MS = 86_400_000;
/** The longest conversation `previous_response_id` follows back. */
const MAX_CHAIN = 10_000;

export interface KeptResponse {
  who: ResponseIdentity;
  accountId: string;
  state: ResponseState;
  at: number;
}

function notFound(id: string, param?: string): GatewayError {
  return new GatewayError('response_not_found', `No stored response has the id '${id.slice(0, 128)}'.`, param === undefined ? {} : { param });
}

/** Item ids of a conversation are its own: sent on, they would name items the provider never stored. */
function withoutId(item: Json): InputItem {
  if (item.type === 'reasoning') return item as InputItem;
  const { id: _id, ...rest } = item;
  return rest as InputItem;
}

export class StoredResponses {
  constructor(private readonly store: ResponseStore, private readonly retentionDays: number) {}

  /** The items of the conversation `id` ends: every stored response's input and output, oldest first. */
  async conversation(id: string, accountId: string, now: number): Promise<InputItem[]> {
    const chain = await this.store.chain(id, accountId, now, MAX_CHAIN);
    // A missing link (deleted, expired) ends the conversation: its content is gone.
    if (chain.length === 0 || chain[0]?.previousId !== null) throw notFound(id, 'previous_response_id');
    return chain.flatMap((r) => [...(JSON.parse(r.input) as Json[]), ...(JSON.parse(r.output) as Json[])].map(withoutId));
  }

  /** Keeps a finished response and its own input items (each given an id, for input_items). */
  async keep(kept: KeptResponse): Promise<void> {
    const request = kept.who.request;
    const input = request.input.map((item) => (typeof item.id === 'string' ? item : { id: itemId('msg'), ...item }));
    await this.store.create({
      id: kept.who.id,
      accountId: kept.accountId,
      previousId: request.previousResponseId ?? null,
      input: JSON.stringify(input),
      output: JSON.stringify(kept.state.output),
      response: JSON.stringify(responseView(kept.who, kept.state)),
      createdAt: kept.at,
      expiresAt: kept.at + this.retentionDays * DAY_MS,
    });
  }

  async get(id: string, accountId: string, now: number): Promise<StoredResponseRecord> {
    const record = await this.store.get(id, accountId, now);
    if (record === undefined) throw notFound(id);
    return record;
  }

  async delete(id: string, accountId: string): Promise<void> {
    if (!(await this.store.delete(id, accountId))) throw notFound(id);
  }

  /** Deletes the expired ones; how many. */
  sweep(now: number): Promise<number> {
    return this.store.deleteExpired(now);
  }
}

const ACCESS = { access: { scope: 'chat', auth: 'required', rateHeaders: 'always' }, errorParam: true } as const;

export function registerStoredResponseRoutes(app: FastifyInstance, stored: StoredResponses, now: () => number): void {
  const accountOf = (request: { gate?: { key: { record: { accountId: string } } } }): string => {
    if (request.gate === undefined) throw invalidApiKey();
    return request.gate.key.record.accountId;
  };
  app.get('/api/v1/responses/:id', { config: ACCESS }, async (request) => {
    const { id } = request.params as { id: string };
    return JSON.parse((await stored.get(id, accountOf(request), now())).response) as Json;
  });
  app.get('/api/v1/responses/:id/input_items', { config: ACCESS }, async (request) => {
    const { id } = request.params as { id: string };
    const record = await stored.get(id, accountOf(request), now());
    return inputItemsPage(JSON.parse(record.input) as Json[], request.query as Record<string, unknown>);
  });
  app.delete('/api/v1/responses/:id', { config: ACCESS }, async (request) => {
    const { id } = request.params as { id: string };
    await stored.delete(id, accountOf(request));
    return { id, object: 'response', deleted: true };
  });
}

/** One page of input items: `order` (desc by default, as that API), `after` an item id, `limit` 1–100 (default 20). */
function inputItemsPage(items: Json[], query: Record<string, unknown>): Json {
  const order = query.order === 'asc' ? 'asc' : 'desc';
  const limit = Math.min(100, Math.max(1, Number.parseInt(String(query.limit ?? '20'), 10) || 20));
  const ordered = order === 'asc' ? items : [...items].reverse();
  const after = typeof query.after === 'string' ? ordered.findIndex((item) => item.id === query.after) : -1;
  const page = ordered.slice(after + 1, after + 1 + limit);
  return {
    object: 'list',
    data: page,
    first_id: page[0]?.id ?? null,
    last_id: page[page.length - 1]?.id ?? null,
    has_more: after + 1 + limit < ordered.length,
  };
}
