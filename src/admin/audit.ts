/**
 * The admin audit log: every change made through the admin API (any method but GET), whoever made
 * it (the token or an operator signed in through OIDC), with its route, account, target, answer
 * status and body, written before the answer leaves; and GET /admin/v1/audit to read it.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseBody } from './key-requests.ts';
import { iso } from '../shared/time.ts';
import type { AuditEntry, PortalStore } from '../store/portal.ts';

const DETAIL_MAX = 2000;
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);
const auditQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(500).default(100), before: z.coerce.number().int().positive().optional() });

const auditView = (e: AuditEntry) => ({
  id: e.id, at: iso(e.at), actor: e.actor, action: e.action, account_id: e.accountId, target: e.target, status: e.status, detail: e.detail,
});

/**
 * The body as JSON, two levels deep at most (admin bodies are flat: names, limits, lists of scopes or
 * addresses); anything deeper is written as its kind. Never a walk of a client's nesting (a body
 * thousands of levels deep is valid JSON).
 */
function auditDetail(body: unknown): string | null {
  if (body === undefined || body === null) return null;
  const shallow = (value: unknown, depth: number): unknown => {
    if (value === null || typeof value !== 'object') return value;
    if (depth === 0) return Array.isArray(value) ? '[array]' : '[object]';
    if (Array.isArray(value)) return value.slice(0, 60).map((v) => shallow(v, depth - 1));
    return Object.fromEntries(Object.entries(value).slice(0, 60).map(([k, v]) => [k, shallow(v, depth - 1)]));
  };
  return JSON.stringify(shallow(body, 2)).slice(0, DETAIL_MAX);
}

export function registerAudit(admin: FastifyInstance, log: PortalStore, now: () => number): void {
  admin.addHook('onSend', async (request, reply, payload) => {
    if (READS.has(request.method) || request.adminActor === undefined) return payload;
    const params = (request.params ?? {}) as Record<string, string | undefined>;
    const body = auditDetail(request.body);
    await log.audit({
      at: now(),
      actor: request.adminActor,
      action: `${request.method} ${request.routeOptions.url ?? request.url}`,
      accountId: params.id ?? null,
      target: params.keyId ?? params.id ?? null,
      status: reply.statusCode,
      detail: body,
    }).catch((err: unknown) => request.log.error({ err }, 'writing the admin audit log failed'));
    return payload;
  });

  admin.get('/audit', async (request) => {
    const query = parseBody(auditQuery, request.query);
    const rows = await log.listAudit(query);
    const last = rows.at(-1);
    return { data: rows.map(auditView), next_before: rows.length === query.limit && last !== undefined ? last.id : null };
  });
}
