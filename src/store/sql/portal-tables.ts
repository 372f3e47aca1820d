/** The portal's tables (migration 120, portal-migration.ts) as Kysely types, beside the gateway's own. */
import type { Generated } from 'kysely';
import type { Database } from './tables.ts';

export type PortalTables = {
  portal_members: { account_id: string; email: string; role: string; created_at: number; invited_by: string | null };
  portal_links: { token_hash: string; email: string; created_at: number; expires_at: number; used_at: number | null };
  auth_sessions: { id_hash: string; realm: string; email: string; csrf_token: string; created_at: number; expires_at: number };
  admin_audit: {
    id: Generated<number>;
    at: number;
    actor: string;
    action: string;
    account_id: string | null;
    target: string | null;
    status: number;
    detail: string | null;
  };
};

export type PortalDatabase = Database & PortalTables;
