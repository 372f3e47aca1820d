/**
 * Which deployment of a model an attempt goes to: by weight among the usable deployments of
 * the first priority that has one. A deployment that failed 3 times in a row (as one process
 * saw it) rests 30 s, in every process when the rests are shared.
 */
import type { ProviderId } from '../catalog/catalog-file.ts';
import type { Rests } from './rests.ts';

export const FAILURES_TO_REST = 3;
export const FAILING_REST_MS = 30_000;

/** A deployment's share and rank (provider-call.ts `Deployed`). */
export interface Placed {
  weight: number;
  priority: number;
}

/** One of `usable` by weight, among those of the smallest priority number; undefined when none is usable. */
export function pickDeployment<D extends Placed>(usable: readonly D[], random: () => number = Math.random): D | undefined {
  let first = Infinity;
  for (const d of usable) first = Math.min(first, d.priority);
  let total = 0;
  for (const d of usable) if (d.priority === first) total += d.weight;
  let point = random() * total;
  let last: D | undefined;
  for (const d of usable) {
    if (d.priority !== first) continue;
    last = d;
    point -= d.weight;
    if (point < 0) return d;
  }
  // Rounding can leave the point at the very end: the last one of the priority takes it.
  return last;
}

export class DeploymentHealth {
  /** Failures in a row, by deployment id; a success forgets it. */
  private readonly failures = new Map<string, number>();

  constructor(private readonly rests: Rests) {}

  resting(provider: ProviderId, providerModelId: string, now: number): boolean {
    return this.rests.of(idOf(provider, providerModelId), now) !== undefined;
  }

  /** Counts a failure; true when this one sends the deployment to rest. */
  failed(provider: ProviderId, providerModelId: string, now: number): boolean {
    const id = idOf(provider, providerModelId);
    const count = (this.failures.get(id) ?? 0) + 1;
    if (count < FAILURES_TO_REST) {
      this.failures.set(id, count);
      return false;
    }
    this.failures.delete(id);
    this.rests.rest(id, 'failing', FAILING_REST_MS, now);
    return true;
  }

  succeeded(provider: ProviderId, providerModelId: string): void {
    if (this.failures.size > 0) this.failures.delete(idOf(provider, providerModelId));
  }
}

function idOf(provider: ProviderId, providerModelId: string): string {
  return `deployment:${provider}:${providerModelId}`;
}
