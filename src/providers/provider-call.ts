/**
 * The glue every door onto a paid run uses to reach a provider, written once. A door gives
 * its candidates (the model asked for, then its fallbacks), each with the deployments it
 * runs on and the door's request for each (call-route.ts); the glue runs the attempts
 * (attempts.ts) under the run's abort signal (client close, provider wait, key revoked): a
 * key from the provider's pool, retries and fallbacks, a non-2xx answer mapped by the door's
 * adapter, a provider refusing the gateway's own key logged as an operator error, a transport
 * failure (refused, reset, cut) mapped to 502.
 *
 * A door's part, before the hold: `prepareRoute` builds every candidate's request once (a
 * request that cannot be built fails there, before any money moves). After the hold:
 * `callProvider` with how to read a 2xx answer; it answers with the value read and the
 * candidate and deployment that gave it (whose model is billed and named in the answer).
 */
import type { PaidRun } from '../billing/paid-run.ts';
import type { GatewayError } from '../shared/errors.ts';
import { RunAttempts } from './attempts.ts';
import type { Answered, CallTarget, ProviderCallDeps, ProviderRoute, ReadAnswer } from './call-route.ts';
import { transportFailure, type UpstreamResponse } from './upstream-client.ts';

export { KEY_SLOT, prepareRoute, withKey } from './call-route.ts';
export type { Answered, CallCandidate, CallTarget, Deployed, ProviderCallDeps, ProviderRoute, ReadAnswer } from './call-route.ts';

/** For streams: the 2xx response itself. */
export function asResponse(response: UpstreamResponse): Promise<UpstreamResponse> {
  return Promise.resolve(response);
}

/** The answer of the first attempt that succeeds; when none does, the error to answer with is thrown. */
export function callProvider<T extends CallTarget, R>(run: PaidRun, route: ProviderRoute<T>, deps: ProviderCallDeps, read: ReadAnswer<T, R>): Promise<Answered<T, R>> {
  return new RunAttempts(run, route, deps, read).answer();
}

/** The error a run ended on: its stop reason's, a transport failure as 502, else what was thrown. */
export function runFailure(run: PaidRun, thrown: unknown): GatewayError {
  return run.errorFor(transportFailure(thrown) ?? thrown);
}
