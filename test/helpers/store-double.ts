/**
 * The real store behind a thin double for what the store rewrite brings and today's
 * store lacks: hold refusals for the limits the atomic hold will check (monthly spending
 * limit, key credit limits, trial rules), scripted per account, and the job's `output`
 * report kept from the settlement and shown on the record.
 */
import type { HoldRefusal } from '../../src/store/money-contract.ts';
import { openStore } from '../../src/store/open-store.ts';
import { wrapsSqlStore } from '../../src/store/sql/sql-store.ts';
import type { Store } from '../../src/store/types.ts';

export interface StoreDouble {
  store: Store;
  /** Every hold of this account is refused so, until `allow`. */
  refuse(accountId: string, refusal: HoldRefusal): void;
  allow(accountId: string): void;
  close(): Promise<void>;
}

export async function storeDouble(): Promise<StoreDouble> {
  const inner = await openStore('sqlite::memory:');
  const refusals = new Map<string, HoldRefusal>();
  const outputs = new Map<string, unknown>();
  const overrides: Partial<Store> = {
    hold: async (hold) => {
      const refusal = refusals.get(hold.accountId);
      return refusal === undefined ? inner.hold(hold) : { ok: false, ...refusal };
    },
    settle: async (jobId, settlement) => {
      if (settlement.output !== undefined) outputs.set(jobId, settlement.output);
      return inner.settle(jobId, settlement);
    },
    getJob: async (id) => {
      const job = await inner.getJob(id);
      return job === undefined || !outputs.has(id) ? job : { ...job, output: outputs.get(id) };
    },
  };
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      if (typeof name === 'string' && name in overrides) return overrides[name as keyof Store];
      const value: unknown = Reflect.get(target, name, receiver === store ? target : receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  wrapsSqlStore(store, inner);
  return {
    store,
    refuse: (accountId, refusal) => refusals.set(accountId, refusal),
    allow: (accountId) => refusals.delete(accountId),
    close: () => inner.close(),
  };
}
