/**
 * The keys of an account, for its members: create (the secret shown once), list with when each
 * was last used, edit limits and alerts, revoke, rotate, and a key's usage against its limits.
 * A key of another account answers as a key that does not exist.
 */
import type { FastifyInstance } from 'fastify';
import { microToCredits } from '../billing/money.ts';
import { createKeyFromBody, patchKeyFromBody } from '../admin/key-requests.ts';
import { issuedKeyView, keyView } from '../admin/views.ts';
import { GatewayError } from '../shared/errors.ts';
import { iso } from '../shared/time.ts';
import { limitsOf } from '../store/limits.ts';
import type { PortalDeps } from './context.ts';

type KeyParams = { Params: { accountId: string; keyId: string } };

export function registerKeyRoutes(app: FastifyInstance, deps: PortalDeps): void {
  const { store, keys, portal, now } = deps;
  const limits = limitsOf(store.money);

  /** The key, if it is the account's: the same 404 as an unknown id otherwise. */
  const ownKey = async (accountId: string, keyId: string) => {
    const key = await store.keys.getKey(keyId);
    if (key === undefined || key.accountId !== accountId) throw new GatewayError('key_not_found', `No key with id ${keyId}.`);
    return key;
  };

  app.get<{ Params: { accountId: string } }>('/keys', async (request) => {
    const list = await store.keys.listKeys(request.params.accountId);
    const lastUsed = await portal.keysLastUsed(list.map((k) => k.id));
    const t = now();
    return {
      data: list.map((k) => {
        const used = lastUsed.get(k.id);
        return { ...keyView(k, t, limits), last_used_at: used === undefined ? null : iso(used) };
      }),
    };
  });

  app.post<{ Params: { accountId: string } }>('/keys', async (request, reply) => {
    const issued = await createKeyFromBody(keys, request.params.accountId, request.body, now(), limits);
    reply.code(201);
    return issued;
  });

  app.patch<KeyParams>('/keys/:keyId', async (request) => {
    await ownKey(request.params.accountId, request.params.keyId);
    return patchKeyFromBody(keys, request.params.keyId, request.body, now(), limits);
  });

  app.post<KeyParams>('/keys/:keyId/revoke', async (request) => {
    await ownKey(request.params.accountId, request.params.keyId);
    return keyView(await keys.revoke(request.params.keyId), now(), limits);
  });

  app.post<KeyParams>('/keys/:keyId/rotate', async (request, reply) => {
    await ownKey(request.params.accountId, request.params.keyId);
    const issued = await keys.rotate(request.params.keyId);
    reply.code(201);
    return issuedKeyView(issued.record, issued.secret, now(), limits);
  });

  app.get<KeyParams>('/keys/:keyId/usage', async (request) => {
    await ownKey(request.params.accountId, request.params.keyId);
    const usage = await keys.usage(request.params.keyId);
    return {
      day_credits: microToCredits(usage.day),
      month_credits: microToCredits(usage.month),
      day_resets_at: iso(usage.dayResetsAt),
      month_resets_at: iso(usage.monthResetsAt),
    };
  });
}
