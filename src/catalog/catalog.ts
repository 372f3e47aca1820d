/**
 * The loaded catalog: entries validated at start-up (a bad entry stops start-up with a
 * message naming it), availability derived once, and look-ups by slug or provider model id.
 */
import { readFileSync } from 'node:fs';
import { catalogFileSchema, type CatalogEntry, type ProviderId } from './catalog-file.ts';
import { tokenPrices, type TokenPrices } from './pricing.ts';
import { GatewayError } from '../shared/errors.ts';

export class CatalogError extends Error {}

export interface CatalogModel {
  entry: CatalogEntry;
  available: boolean;
  unavailableReason: string | undefined;
  useInstead: string | undefined;
  /** Exact token prices (token-priced models only). */
  prices: TokenPrices | undefined;
}

/** What the catalog must know of the providers and routes (higher layers, so the wiring passes it in). */
export interface CatalogOptions {
  /** Providers whose chat protocol the gateway speaks: only their models may carry chat routing facts. */
  chatProviders: readonly ProviderId[];
  /** Why no route of this gateway runs the entry (no chat provider serves it, no route for its category); undefined when one does. */
  unrunnable: (entry: CatalogEntry) => string | undefined;
  /** The variable the operator must set for the provider's API key, when it has none; undefined when it has one. */
  missingApiKey: (provider: ProviderId) => string | undefined;
}

export class Catalog {
  readonly models: readonly CatalogModel[];
  readonly pricesCheckedAt: string;
  private readonly bySlugIndex = new Map<string, CatalogModel>();
  private readonly byProviderIdIndex = new Map<string, CatalogModel[]>();

  private constructor(models: CatalogModel[], pricesCheckedAt: string) {
    this.models = models;
    this.pricesCheckedAt = pricesCheckedAt;
    for (const model of models) {
      this.bySlugIndex.set(model.entry.slug, model);
      const list = this.byProviderIdIndex.get(model.entry.provider_model_id) ?? [];
      list.push(model);
      this.byProviderIdIndex.set(model.entry.provider_model_id, list);
    }
    // Where several slugs share a provider model id, the runnable, canonical one wins (docs/catalog.md).
    for (const list of this.byProviderIdIndex.values()) list.sort((a, b) => rank(a) - rank(b));
  }

  static fromFile(path: string, options: CatalogOptions): Catalog {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new CatalogError(`Catalog file ${path} cannot be read: ${(error as Error).message}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new CatalogError(`Catalog file ${path} is not valid JSON: ${(error as Error).message}`);
    }
    return Catalog.fromJson(json, options, path);
  }

  static fromJson(json: unknown, options: CatalogOptions, source = 'catalog'): Catalog {
    const parsed = catalogFileSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path = issue?.path ?? [];
      let where = path.join('.');
      if (path[0] === 'models' && typeof path[1] === 'number') {
        const raw = (json as { models?: { slug?: unknown }[] }).models?.[path[1]];
        const slug = typeof raw?.slug === 'string' ? ` '${raw.slug}'` : '';
        where = `entry ${path[1]}${slug}, field ${path.slice(2).join('.') || '(entry)'}`;
      }
      throw new CatalogError(`Catalog ${source} is invalid at ${where}: ${issue?.message ?? 'invalid'}`);
    }
    const entries = parsed.data.models;
    checkReferences(entries, options, source);
    return new Catalog(entries.map((entry) => derive(entry, options)), parsed.data.prices_checked_at);
  }

  bySlug(slug: string): CatalogModel | undefined {
    return this.bySlugIndex.get(slug);
  }

  /** A slug, or a provider model id (the preferred of several matches). */
  resolve(name: string): CatalogModel | undefined {
    return this.bySlugIndex.get(name) ?? this.byProviderIdIndex.get(name)?.[0];
  }
}

/** One place a model runs: a provider and the model's id there, with its share and rank (docs/catalog.md "Deployments"). */
export interface Deployment {
  provider: ProviderId;
  providerModelId: string;
  /** Share of the model's requests among the deployments of its priority. */
  weight: number;
  /** 0 runs first; a larger number only when every deployment before it rests or failed. */
  priority: number;
}

/** Where a model runs: its `deployments`, else at its provider under its provider model id. */
export function deploymentsOf(entry: CatalogEntry): Deployment[] {
  if (entry.deployments === undefined) return [{ provider: entry.provider, providerModelId: entry.provider_model_id, weight: 1, priority: 0 }];
  return entry.deployments.map((d) => ({ provider: d.provider, providerModelId: d.provider_model_id, weight: d.weight, priority: d.priority }));
}

/** 503 model_unavailable for a model that cannot run now (no price, removed, duplicate, provider not configured), with what to use instead. */
export function modelUnavailable(asked: string, model: CatalogModel): GatewayError {
  const reason = model.unavailableReason ?? 'It has no price.';
  const instead = model.useInstead === undefined ? '' : ` Use '${model.useInstead}' instead.`;
  return new GatewayError('model_unavailable', `The model '${asked}' cannot run now. ${reason}${instead}`, { param: 'model' });
}

/** The reason a model whose providers have no API key cannot run: what the operator must set (any one of them will do). */
export function noApiKeyReason(missing: readonly { provider: ProviderId; variable: string }[]): string {
  return `The gateway has no API key for ${missing.map((m) => m.provider).join(' or ')}: the operator must set ${missing.map((m) => m.variable).join(' or ')}.`;
}

function rank(model: CatalogModel): number {
  const status = model.entry.lifecycle?.status;
  if (status === 'duplicate') return 3;
  if (status === 'removed') return 4;
  return model.available ? 0 : status === 'deprecated' ? 1 : 2;
}

function derive(entry: CatalogEntry, options: CatalogOptions): CatalogModel {
  const model = (reason: string | undefined, useInstead?: string): CatalogModel => ({
    entry,
    available: reason === undefined,
    unavailableReason: reason,
    useInstead: reason === undefined ? undefined : useInstead,
    prices: tokenPrices(entry.pricing),
  });
  const lifecycle = entry.lifecycle;
  if (lifecycle?.status === 'removed') return model('Removed by its provider.', lifecycle.successor_slug);
  if (lifecycle?.status === 'duplicate') return model(`Duplicate entry of ${lifecycle.duplicate_of}.`, lifecycle.duplicate_of);
  if (entry.pricing === null) return model('Not priced yet.', entry.unavailable?.use_instead);
  if (entry.unavailable !== undefined) return model(entry.unavailable.reason, entry.unavailable.use_instead);
  // The spec's available is "can run now": a model no route runs cannot, nor one none of whose deployments has a key.
  const unrunnable = options.unrunnable(entry);
  if (unrunnable !== undefined) return model(unrunnable);
  const missing = [...new Set(deploymentsOf(entry).map((d) => d.provider))].map((provider) => ({ provider, variable: options.missingApiKey(provider) }));
  if (missing.every((m) => m.variable !== undefined)) return model(noApiKeyReason(missing as { provider: ProviderId; variable: string }[]));
  return model(undefined);
}

function checkReferences(entries: CatalogEntry[], options: CatalogOptions, source: string): void {
  const slugs = new Set<string>();
  entries.forEach((entry, index) => {
    const fail = (field: string, message: string) => {
      throw new CatalogError(`Catalog ${source} is invalid at entry ${index} '${entry.slug}', field ${field}: ${message}`);
    };
    if (slugs.has(entry.slug)) fail('slug', 'duplicate slug');
    slugs.add(entry.slug);
    if (entry.chat !== undefined && !options.chatProviders.includes(entry.provider)) {
      fail('chat', `only ${options.chatProviders.join(', ')} models can have chat routing facts`);
    }
    if (entry.chat !== undefined && entry.pricing !== null && entry.pricing.unit !== 'per_token') fail('pricing.unit', 'chat models are priced per_token');
    if (entry.embedding !== undefined && entry.category !== 'embedding') fail('embedding', 'only embedding models have embedding facts');
    if (entry.transcription !== undefined && entry.category !== 'transcription_stt') fail('transcription', 'only transcription models have transcription facts');
    if (entry.deployments !== undefined) {
      if (entry.chat === undefined) fail('deployments', 'only chat models have deployments');
      const places = new Set<string>();
      entry.deployments.forEach((d, i) => {
        if (!options.chatProviders.includes(d.provider)) fail(`deployments.${i}.provider`, `a deployment runs at one of ${options.chatProviders.join(', ')}`);
        const place = `${d.provider} ${d.provider_model_id}`;
        if (places.has(place)) fail(`deployments.${i}`, 'the same provider and provider_model_id twice');
        places.add(place);
      });
    }
    if (entry.fallbacks !== undefined && entry.chat === undefined) fail('fallbacks', 'only chat models have fallbacks');
  });
  const bySlug = new Map(entries.map((entry) => [entry.slug, entry]));
  entries.forEach((entry, index) => {
    (entry.fallbacks ?? []).forEach((slug, i) => {
      const fail = (message: string) => {
        throw new CatalogError(`Catalog ${source} is invalid at entry ${index} '${entry.slug}', field fallbacks.${i}: ${message}`);
      };
      const fallback = bySlug.get(slug);
      if (fallback === undefined) fail(`no model has slug '${slug}'`);
      else if (fallback.chat === undefined) fail(`'${slug}' is not a chat model`);
      if (slug === entry.slug) fail('a model is not its own fallback');
      if ((entry.fallbacks ?? []).indexOf(slug) !== i) fail(`'${slug}' is named twice`);
    });
  });
  entries.forEach((entry, index) => {
    const refs: [string, string | undefined][] = [
      ['lifecycle.successor_slug', entry.lifecycle !== undefined && 'successor_slug' in entry.lifecycle ? entry.lifecycle.successor_slug : undefined],
      ['lifecycle.duplicate_of', entry.lifecycle?.status === 'duplicate' ? entry.lifecycle.duplicate_of : undefined],
      ['unavailable.use_instead', entry.unavailable?.use_instead],
    ];
    for (const [field, slug] of refs) {
      if (slug !== undefined && !slugs.has(slug)) {
        throw new CatalogError(`Catalog ${source} is invalid at entry ${index} '${entry.slug}', field ${field}: no model has slug '${slug}'`);
      }
    }
  });
}
