/** The portal API's answers (src/portal/*). Credits are decimal numbers, times ISO 8601. */
export type Role = 'owner' | 'member';

export interface Session {
  email: string;
  csrf_token: string;
  expires_at: string;
  accounts: { id: string; name: string; role: Role }[];
}

export interface Account {
  id: string;
  name: string;
  email: string | null;
  has_purchase: boolean;
  billing_emails: boolean;
  balance_credits: number;
  held_credits: number;
  available_credits: number;
  monthly_spending_limit_credits: number | null;
  month_spent_credits: number;
  role: Role;
}

export interface Key {
  id: string;
  name: string;
  key_prefix: string;
  scopes: string[];
  requests_per_minute: number;
  ip_allowlist: string[];
  daily_limit_credits: number | null;
  monthly_limit_credits: number | null;
  expires_at: string | null;
  email_alerts: boolean;
  created_at: string;
  revoked_at: string | null;
  status: 'active' | 'revoked' | 'expired';
  last_used_at: string | null;
}

export interface IssuedKey extends Omit<Key, 'last_used_at'> {
  key: string;
}

export interface UsageAmounts {
  requests: number;
  errors: number;
  credits: number;
  prompt_tokens: number;
  completion_tokens: number;
}

export interface Usage {
  from: string;
  to: string;
  totals: UsageAmounts;
  by_day: (UsageAmounts & { day: string })[];
  by_model: (UsageAmounts & { model: string })[];
  by_key: (UsageAmounts & { key_id: string | null; key_name: string | null })[];
}

export interface Job {
  id: string;
  key_id: string | null;
  key_name: string | null;
  model: string;
  status: string;
  code: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  credits: number | null;
  created_at: string;
  latency_ms: number | null;
}

export interface MoneyEntry {
  id: number;
  kind: string;
  credits: number;
  balance_after_credits: number;
  job_id: string | null;
  created_at: string;
}

export interface Member {
  email: string;
  role: Role;
  invited_by: string | null;
  created_at: string;
}

export interface Notification {
  kind: 'warning' | 'limit_reached';
  key_id: string | null;
  key_name: string | null;
  limit: 'daily' | 'monthly';
  threshold: number;
  created_at: string;
  emailed: boolean;
}
