/** Benchmark accounts: purchased credits (trial rules out of the way) and many keys at 6,000 rpm. */
const MAX_KEYS_PER_ACCOUNT = 20;

export interface BenchKeys {
  accountIds: string[];
  /** Round-robin over every key, so no key's rate limit is what gets measured. */
  next(): string;
}

async function admin<T>(base: string, token: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

export async function createBenchAccounts(base: string, token: string, accounts: number): Promise<BenchKeys> {
  const keys: string[] = [];
  const accountIds: string[] = [];
  for (let a = 0; a < accounts; a++) {
    const account = await admin<{ id: string }>(base, token, 'POST', '/admin/v1/accounts', { name: `bench ${a}`, has_purchase: true, created_at: '2025-01-01T00:00:00Z' });
    accountIds.push(account.id);
    await admin(base, token, 'POST', `/admin/v1/accounts/${account.id}/credits`, { credits: 10_000_000, purchase: true });
    for (let k = 0; k < MAX_KEYS_PER_ACCOUNT; k++) {
      const key = await admin<{ key: string }>(base, token, 'POST', `/admin/v1/accounts/${account.id}/keys`, { name: `bench ${k}`, requests_per_minute: 6000 });
      keys.push(key.key);
    }
  }
  let i = 0;
  return { accountIds, next: () => keys[i++ % keys.length] as string };
}

export interface LedgerCheck {
  ok: boolean;
  accounts: number;
  rows: number;
  open_holds: number;
  problems: string[];
}

/** Σ top-ups + grants − Σ settles equals every balance, and no hold is left open. */
export async function checkLedger(base: string, token: string, accountIds: string[]): Promise<LedgerCheck> {
  const problems: string[] = [];
  let rows = 0;
  let openHolds = 0;
  for (const id of accountIds) {
    const account = await admin<{ balance_credits: number; held_credits: number }>(base, token, 'GET', `/admin/v1/accounts/${id}`);
    const ledger = await admin<{ kind: string; credits: number; job_id: string | null }[]>(base, token, 'GET', `/admin/v1/accounts/${id}/ledger?limit=all`);
    rows += ledger.length;
    let micro = 0;
    const closed = new Set<string>();
    for (const row of ledger) {
      const amount = Math.round(row.credits * 1_000_000);
      if (row.kind === 'topup' || row.kind === 'grant') micro += amount;
      if (row.kind === 'settle') micro -= amount;
      if ((row.kind === 'settle' || row.kind === 'refund') && row.job_id !== null) closed.add(row.job_id);
    }
    const open = ledger.filter((r) => r.kind === 'hold' && r.job_id !== null && !closed.has(r.job_id)).length;
    openHolds += open;
    if (micro !== Math.round(account.balance_credits * 1_000_000)) problems.push(`${id}: ledger ${micro} ≠ balance ${account.balance_credits}`);
    if (account.held_credits !== 0 || open !== 0) problems.push(`${id}: ${open} holds left open (${account.held_credits} credits held)`);
  }
  return { ok: problems.length === 0, accounts: accountIds.length, rows, open_holds: openHolds, problems };
}
