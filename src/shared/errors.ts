/**
 * The one catalogue of error codes: each code's HTTP status and error type.
 * Nothing else in the gateway invents an error shape.
 */

const CATALOGUE = {
  // 400
  invalid_json: [400, 'invalid_request_error'],
  invalid_request: [400, 'invalid_request_error'],
  model_not_supported: [400, 'invalid_request_error'],
  unsupported_content: [400, 'invalid_request_error'],
  provider_rejected_request: [400, 'invalid_request_error'],
  validation_failed: [400, 'invalid_request_error'],
  unsupported_parameter: [400, 'invalid_request_error'],
  invalid_value: [400, 'invalid_request_error'],
  provider_rejected_input: [400, 'invalid_request_error'],
  invalid_category: [400, 'invalid_request_error'],
  invalid_provider: [400, 'invalid_request_error'],
  invalid_body: [400, 'invalid_request_error'],
  missing_file: [400, 'invalid_request_error'],
  empty_file: [400, 'invalid_request_error'],
  audio_unreadable: [400, 'invalid_request_error'],
  voice_sample_required: [400, 'invalid_request_error'],
  invalid_voice_sample: [400, 'invalid_request_error'],
  consent_required: [400, 'invalid_request_error'],
  invalid_link: [400, 'invalid_request_error'],
  // 401
  invalid_api_key: [401, 'authentication_error'],
  invalid_admin_token: [401, 'authentication_error'],
  invalid_metrics_token: [401, 'authentication_error'],
  not_signed_in: [401, 'authentication_error'],
  // 402
  insufficient_credits: [402, 'insufficient_credits_error'],
  spending_limit_reached: [402, 'insufficient_credits_error'],
  monthly_limit_exceeded: [402, 'spending_limit_error'],
  // 403
  insufficient_scope: [403, 'permission_error'],
  ip_not_allowed: [403, 'permission_error'],
  api_key_limit_unsupported: [403, 'permission_error'],
  forbidden: [403, 'authentication_error'],
  csrf_failed: [403, 'permission_error'],
  owner_only: [403, 'permission_error'],
  // 404
  not_found: [404, 'not_found_error'],
  model_not_found: [404, 'not_found_error'],
  job_not_found: [404, 'not_found_error'],
  response_not_found: [404, 'not_found_error'],
  account_not_found: [404, 'not_found_error'],
  key_not_found: [404, 'not_found_error'],
  member_not_found: [404, 'not_found_error'],
  // 405, 408, 413, 415, 417, 431
  method_not_allowed: [405, 'invalid_request_error'],
  request_timeout: [408, 'invalid_request_error'],
  payload_too_large: [413, 'invalid_request_error'],
  too_many_embedding_values: [413, 'invalid_request_error'],
  file_too_large: [413, 'invalid_request_error'],
  unsupported_media_type: [415, 'invalid_request_error'],
  type_mismatch: [415, 'invalid_request_error'],
  expectation_failed: [417, 'invalid_request_error'],
  request_header_fields_too_large: [431, 'invalid_request_error'],
  // 429
  rate_limit_exceeded: [429, 'rate_limit_error'],
  api_key_limit_exceeded: [429, 'rate_limit_error'],
  trial_limit: [429, 'rate_limit_error'],
  upload_limit_exceeded: [429, 'rate_limit_error'],
  sign_in_limited: [429, 'rate_limit_error'],
  upstream_rate_limited: [429, 'rate_limit_error'],
  // 499, 5xx
  client_closed_request: [499, 'api_error'],
  internal_error: [500, 'api_error'],
  upstream_error: [502, 'api_error'],
  model_unavailable: [503, 'api_error'],
  provider_timeout: [504, 'api_error'],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof CATALOGUE;

/** Every code of the catalogue (the OpenAPI document and the API docs list them all). */
export const ERROR_CODES = Object.keys(CATALOGUE) as ErrorCode[];

export interface ErrorDetails {
  formErrors: string[];
  fieldErrors: Record<string, string[]>;
}

export interface ErrorBody {
  error: {
    message: string;
    type: string;
    code: ErrorCode;
    param?: string | null;
    details?: ErrorDetails;
  };
}

export interface GatewayErrorOptions {
  /** Chat answers always carry `param` (null when no field is at fault). */
  param?: string | null;
  details?: ErrorDetails;
  headers?: Record<string, string>;
  /** For the operator's log line only, never the answer: what the provider did (refused, unreachable), never a key. */
  logCause?: string;
}

/** A refusal or failure the client sees, in the spec's error shape. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: string;
  readonly param: string | null | undefined;
  readonly details: ErrorDetails | undefined;
  readonly headers: Record<string, string> | undefined;
  readonly logCause: string | undefined;

  constructor(code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message);
    const [status, type] = CATALOGUE[code];
    this.code = code;
    this.status = status;
    this.type = type;
    this.param = options.param;
    this.details = options.details;
    this.headers = options.headers;
    this.logCause = options.logCause;
  }

  body(): ErrorBody {
    const error: ErrorBody['error'] = { message: this.message, type: this.type, code: this.code };
    if (this.param !== undefined) error.param = this.param;
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }
}

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(CATALOGUE, code);
}

export function statusOf(code: ErrorCode): number {
  return CATALOGUE[code][0];
}

export function typeOf(code: ErrorCode): string {
  return CATALOGUE[code][1];
}

export const INVALID_API_KEY_MESSAGE = 'Invalid API key';

export function invalidApiKey(): GatewayError {
  return new GatewayError('invalid_api_key', INVALID_API_KEY_MESSAGE);
}

export function internalError(): GatewayError {
  return new GatewayError('internal_error', 'The server had an internal error. Retry once, then with backoff.');
}
