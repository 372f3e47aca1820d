import { describe, expect, it } from 'vitest';
import { clientErrorResponse } from './client-error.ts';

describe('answers to errors raised before routing', () => {
  it.each([
    ['HPE_HEADER_OVERFLOW', 431, 'request_header_fields_too_large'],
    ['ERR_HTTP_REQUEST_TIMEOUT', 408, 'request_timeout'],
    ['HPE_INVALID_HEADER_TOKEN', 400, 'invalid_request'],
    [undefined, 400, 'invalid_request'],
  ])('%s → %i %s in the error object, connection closed', (code, status, errorCode) => {
    const raw = clientErrorResponse(code);
    const [head = '', body = ''] = raw.split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(head).toContain('connection: close');
    expect(head).toContain(`content-length: ${Buffer.byteLength(body)}`);
    expect(JSON.parse(body)).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', code: errorCode, param: null } });
  });
});
