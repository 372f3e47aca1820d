/**
 * Errors on the Messages route in that API's envelope, so its SDKs raise the right exception:
 * `{"type":"error","error":{"type":T,"message":…,"code":C}}`, with the status and code C the chat
 * route would give and T by status (DECISIONS "Agent formats: the Messages route").
 */
import type { GatewayError } from '../shared/errors.ts';

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'invalid_request_error',
  429: 'rate_limit_error',
  500: 'api_error',
  502: 'api_error',
  503: 'overloaded_error',
  504: 'timeout_error',
};

export interface MessagesErrorBody {
  type: 'error';
  error: { type: string; message: string; code: string; param?: string };
}

export function errorEnvelope(error: GatewayError): MessagesErrorBody {
  const type = TYPE_BY_STATUS[error.status] ?? (error.status < 500 ? 'invalid_request_error' : 'api_error');
  const body: MessagesErrorBody = { type: 'error', error: { type, message: error.message, code: error.code } };
  if (typeof error.param === 'string') body.error.param = error.param;
  return body;
}
