/** The spec's Model object (and the extra fields of the single-model route). Internal routing facts never appear. */
import type { CatalogModel } from './catalog.ts';
import { publicPricing, unpricedPricing } from './pricing.ts';

export function modelView(model: CatalogModel, detailed: boolean): Record<string, unknown> {
  const e = model.entry;
  const view: Record<string, unknown> = {
    id: e.slug,
    object: 'model',
    created: Math.floor(Date.parse(`${e.created}T00:00:00Z`) / 1000),
    owned_by: e.provider,
    name: e.name,
    description: e.description,
    category: e.category,
    provider_model_id: e.provider_model_id,
    image: e.image,
    available: model.available,
  };
  if (!model.available) {
    view.unavailable_reason = model.unavailableReason;
    if (model.useInstead !== undefined) view.use_instead = model.useInstead;
  }
  if (e.lifecycle !== undefined) {
    view.lifecycle = {
      status: e.lifecycle.status,
      successor_slug: 'successor_slug' in e.lifecycle ? (e.lifecycle.successor_slug ?? null) : null,
      duplicate_of: e.lifecycle.status === 'duplicate' ? e.lifecycle.duplicate_of : null,
    };
  }
  view.pricing = e.pricing === null ? unpricedPricing(e.category) : publicPricing(e.pricing);
  view.capabilities = {
    context_window: e.context_window,
    max_output_tokens: e.max_output_tokens,
    supported_formats: e.supported_formats,
  };
  view.metadata = {
    tags: e.tags,
    is_new: e.is_new,
    is_featured: e.is_featured,
    avg_latency_ms: e.avg_latency_ms,
    estimated_duration_seconds: e.estimated_duration_seconds,
  };
  if (detailed) {
    view.long_description = e.long_description;
    view.configuration = e.configuration;
    view.examples = e.examples;
  }
  return view;
}
