/**
 * The real store behind a thin double for what the store rewrite brings and today's
 * store lacks: hold refusals for the limits the atomic hold will check (monthly spending
 * limit, key credit limits, trial rules), scripted per account, and the job's `output`
 * report kept from the settlement and shown on the record.
 */
import type { HoldRefusal } from '../../src/store/money-contract.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { JobStore, MoneyStore, Store } from '../../src/store/types.ts';

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
  const store = withParts(inner, {
    money: {
      hold: async (hold) => {
        const refusal = refusals.get(hold.accountId);
        return refusal === undefined ? inner.money.hold(hold) : { ok: false, ...refusal };
      },
      settle: async (jobId, settlement) => {
        if (settlement.output !== undefined) outputs.set(jobId, settlement.output);
        return inner.money.settle(jobId, settlement);
      },
    },
    jobs: {
      getJob: async (id) => {
        const job = await inner.jobs.getJob(id);
        return job === undefined || !outputs.has(id) ? job : { ...job, output: outputs.get(id) };
      },
    },
  });
  return {
    store,
    refuse: (accountId, refusal) => refusals.set(accountId, refusal),
    allow: (accountId) => refusals.delete(accountId),
    close: () => inner.close(),
  };
}

/** Replacements for some methods of some parts of a store. */
export interface PartOverrides {
  money?: Partial<MoneyStore>;
  jobs?: Partial<JobStore>;
}

/** The store with some methods of its parts replaced; everything else is the store's own. */
export function withParts(store: Store, overrides: PartOverrides): Store {
  const wrapped = Object.create(store) as Store;
  for (const [part, replaced] of Object.entries(overrides) as [keyof PartOverrides, Record<string, unknown>][]) {
    const original = store[part] as object;
    const proxy = new Proxy(original, {
      get(target, name) {
        if (typeof name === 'string' && name in replaced) return replaced[name];
        const value: unknown = Reflect.get(target, name, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    Object.defineProperty(wrapped, part, { value: proxy, enumerable: true });
  }
  return wrapped;
}
