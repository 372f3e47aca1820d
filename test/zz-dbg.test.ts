import { it, expect } from 'vitest';
import { startChatHarness } from '/work/wt/routing/test/helpers/chat.ts';
it('dbg', async () => {
  const h = await startChatHarness();
  const { key } = await h.gw.account();
  h.openai.enqueue({ kind: 'error', status: 500 });
  const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] } });
  console.log(r.status, r.text);
  const r2 = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] } });
  console.log(r2.status, r2.text);
  await h.close();
});
