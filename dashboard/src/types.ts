/** Shapes of the admin API's answers (README "Admin API"). */
export interface Account {
  id: string;
  name: string;
  email: string | null;
  created_at: string;
  has_purchase: boolean;
  billing_emails: boolean;
  balance_credits: number;
  held_credits: number;
  available_credits: number;
  monthly_spending_limit_credits: number | null;
  month_spent_credits?: number;
  /** The newest request (the accounts list). */
  last_activity_at?: string | null;
}

export interface ApiKey {
  id: string;
  account_id: string;
  name: string;
  key_prefix: string;
  scopes: string[];
  requests_per_minute: number;
  ip_allowlist: string[];
  daily_limit_credits: number | null;
  monthly_limit_credits: number | null;
  expires_at: string | null;
  warning_threshold: number;
  email_alerts: boolean;
  created_at: string;
  revoked_at: string | null;
  status: 'active' | 'revoked' | 'expired';
  /** The newest request with it (the keys list of an account). */
  last_used_at?: string | null;
}

export type IssuedKey = ApiKey & { key: string };

export interface KeyUsage {
  day_credits: number;
  month_credits: number;
  day_resets_at: string;
  month_resets_at: string;
}

export interface LedgerRow {
  id: number;
  job_id: string | null;
  key_id: string | null;
  kind: string;
  credits: number;
  created_at: string;
}

export interface StatementPage {
  balance_credits: number;
  data: (LedgerRow & { change_credits: number; balance_after_credits: number })[];
  next_before: number | null;
}

export interface NotificationRow {
  kind: string;
  key_id: string;
  limit: string;
  threshold: number;
  created_at: string;
  emailed: boolean;
}

export interface Job {
  id: string;
  account_id: string;
  key_id: string | null;
  key_name: string | null;
  kind: string;
  model: string;
  status: string;
  code: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  /** Of prompt_tokens: read from and written to the provider's prompt cache; null where the run reported none. */
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  credits: number | null;
  created_at: string;
  latency_ms: number | null;
}

export interface JobAttempt {
  model: string;
  provider: string;
  deployment: string;
  key: number;
  status: number;
  code?: string;
  retry?: string;
  ms: number;
}

export interface JobDetail extends Job {
  held_credits: number;
  finished_at: string | null;
  attempts: JobAttempt[] | null;
  account_name: string | null;
  provider: string | null;
  provider_model_id: string | null;
  error_message: string | null;
  ledger: LedgerRow[];
}

export interface JobPage {
  data: Job[];
  next_cursor: string | null;
}

export interface Usage {
  from: string;
  to: string;
  bucket: 'hour' | 'day';
  totals: { requests: number; errors: number; credits: number };
  series: {
    t: string;
    requests: number;
    errors: number;
    credits: number;
    prompt_tokens: number;
    completion_tokens: number;
    cache_read_tokens: number;
    cache_write_tokens: number;
  }[];
  errors_by_code: { code: string; requests: number }[];
  top_models: { model: string; requests: number; credits: number }[];
  top_keys: { key_id: string; key_name: string | null; account_id: string; requests: number; credits: number }[];
  /** With `stack=model|key`: each group's credits and requests per bucket of `series`. */
  stacks?: { name: string; label: string; credits: number[]; requests: number[] }[];
}

export interface CatalogModel {
  id: string;
  name: string;
  owned_by: string;
  category: string;
  available: boolean;
  unavailable_reason?: string;
  use_instead?: string;
  lifecycle?: { status: string };
  pricing: {
    unit: string;
    usd: number | null;
    basis: string;
    input_usd_per_1m?: number;
    output_usd_per_1m?: number;
    input_credits_per_1m?: number;
    output_credits_per_1m?: number;
    credits: number | null;
  } | null;
}
