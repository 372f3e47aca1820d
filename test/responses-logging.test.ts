/**
 * Stored conversation content is customer data: it never appears in the gateway's logs, at the
 * most verbose level, whatever the request (create, stream, continue, retrieve, input items,
 * delete, a refused continuation).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { captureLog } from './helpers/log-capture.ts';

const log = captureLog();
let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness({ LOG_LEVEL: 'trace' }, [], { logStream: log.stream });
});
afterAll(async () => h.close());

describe('stored responses and the logs', () => {
  it('no input or output text reaches a log line', async () => {
    const { key } = await h.gw.account();
    const api = (path: string, body?: unknown, method: 'GET' | 'POST' | 'DELETE' = 'POST') => h.gw.api(path, { key, method, ...(body === undefined ? {} : { body }) });
    h.anthropic.enqueue({ kind: 'text', text: 'The answer is SECRET-OUTPUT-7731.' });
    const first = await api('/responses', { model: 'claude-test', input: 'My password is SECRET-INPUT-4420', instructions: 'SECRET-INSTRUCTIONS-1' });
    expect(first.status, first.text).toBe(200);
    h.anthropic.enqueue({ kind: 'text', text: 'Streamed SECRET-OUTPUT-9001.', chunks: 4 });
    const second = await api('/responses', { model: 'claude-test', input: 'Again SECRET-INPUT-5555', previous_response_id: first.json.id, stream: true });
    expect(second.status).toBe(200);
    expect((await api(`/responses/${first.json.id}`, undefined, 'GET')).status).toBe(200);
    expect((await api(`/responses/${first.json.id}/input_items`, undefined, 'GET')).status).toBe(200);
    expect((await api(`/responses/${first.json.id}`, undefined, 'DELETE')).status).toBe(200);
    const refused = await api('/responses', { model: 'claude-test', input: 'SECRET-INPUT-6666', previous_response_id: first.json.id });
    expect(refused.status).toBe(404);
    const text = log.text();
    expect(log.requestLines().some((l) => l.route === 'POST /api/v1/responses')).toBe(true);
    for (const secret of ['SECRET-INPUT', 'SECRET-OUTPUT', 'SECRET-INSTRUCTIONS']) expect(text).not.toContain(secret);
  });
});
