/**
 * What the provider-call glue knows across runs, one per gateway: where each provider is and
 * its keys.
 */
import type { ProviderId } from '../catalog/catalog-file.ts';
import { GatewayError } from '../shared/errors.ts';

/** A provider's base URL and its keys, in the configured order. */
export interface PoolEndpoint {
  baseUrl: string;
  apiKeys: readonly string[];
}

export interface RoutingOptions {
  endpoints: Partial<Record<ProviderId, PoolEndpoint>>;
}

export class Routing {
  constructor(private readonly options: RoutingOptions) {}

  /** A provider's endpoint; a provider without one is a wiring error the door should have caught (503). */
  endpoint(provider: ProviderId): PoolEndpoint {
    const endpoint = this.options.endpoints[provider];
    if (endpoint === undefined) throw new GatewayError('model_unavailable', `The provider ${provider} is not configured.`);
    return endpoint;
  }
}
