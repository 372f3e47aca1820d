/** `npm run demo`: serves on the emulators and prints a working key and a portal sign-in link; chat answers, streamed and not. */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { http } from './helpers/gateway.ts';

describe('npm run demo', () => {
  it('prints a key that answers a chat completion, streaming and not, embeddings, an image and a video, from the emulators', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'demo'], { env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const out = await new Promise<string>((resolve, reject) => {
        let text = '';
        child.stdout.on('data', (d: Buffer) => {
          text += d.toString();
          if (text.includes('Press Ctrl+C')) resolve(text);
        });
        child.stderr.on('data', (d: Buffer) => (text += d.toString()));
        child.on('exit', (code) => reject(new Error(`demo exited ${code}: ${text}`)));
      });
      const base = /running at (http:\/\/\S+)\/api\/v1/.exec(out)?.[1] as string;
      const key = /API key \(1000 credits\):\s+(svc_live_[0-9a-f]{64})/.exec(out)?.[1] as string;
      expect(base).toBeDefined();
      expect(key).toBeDefined();
      expect(out).toContain('curl');
      // The printed portal link signs the account's owner in, once.
      const token = /Portal sign-in link:\s+http:\/\/\S+\/portal\/#\/link\/([A-Za-z0-9_-]+)/.exec(out)?.[1] as string;
      const signedIn = await http(`${base}/portal/api/sign-in/link`, { body: { token } });
      expect(signedIn.status).toBe(200);
      expect(signedIn.json).toMatchObject({ email: 'demo@example.com', accounts: [{ name: 'Demo account', role: 'owner' }] });
      // Buying credits goes to the demo's Stripe emulator.
      const cookie = String(signedIn.headers['set-cookie']).split(';')[0] as string;
      const checkout = await http(`${base}/portal/api/accounts/${signedIn.json.accounts[0].id}/checkout`, {
        body: { amount_usd: 10 }, headers: { cookie, 'x-csrf-token': signedIn.json.csrf_token },
      });
      expect(checkout.status).toBe(201);
      expect(checkout.json.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/pay\/cs_test_/);
      const models = await http(`${base}/api/v1/models?limit=3`, { key });
      expect(models.status).toBe(200);
      const answer = await http(`${base}/api/v1/chat/completions`, { key, body: { model: 'gpt-6-luna', messages: [{ role: 'user', content: 'Hello!' }] } });
      expect(answer.status).toBe(200);
      expect(answer.json.choices[0].message.content).toContain('Hello');
      const streamed = await http(`${base}/api/v1/chat/completions`, { key, body: { model: 'deepseek-flash', stream: true, messages: [{ role: 'user', content: 'Stream, please' }] } });
      expect(streamed.status).toBe(200);
      expect(streamed.text).toContain('"chat.completion.chunk"');
      expect(streamed.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      const embedded = await http(`${base}/api/v1/embeddings`, { key, body: { input: ['Hello!', 'Bonjour!'], dimensions: 4 } });
      expect(embedded.status).toBe(200);
      expect(embedded.json.data.map((d: { embedding: number[] }) => d.embedding.length)).toEqual([4, 4]);
      const job = await http(`${base}/api/v1/jobs/${String(embedded.headers['x-job-id'])}`, { key });
      expect(job.json).toMatchObject({ kind: 'embeddings', status: 'succeeded' });
      // An image and a video on the predictions emulator, with the calls the demo prints.
      expect(out).toContain('/api/v1/images/generations');
      expect(out).toContain('/api/v1/videos/generations');
      const image = await http(`${base}/api/v1/images/generations`, { key, body: { model: 'flux-2-pro', prompt: 'A lighthouse at dawn, watercolour', n: 2 } });
      expect(image.status).toBe(200);
      expect(image.json.data).toHaveLength(2);
      expect((await http(image.json.data[0].url as string)).headers['content-type']).toBe('image/png');
      const video = await http(`${base}/api/v1/videos/generations`, { key, body: { model: 'kling-v3-standard', prompt: 'Waves rolling onto a beach at night', duration: 5 } });
      expect(video.status).toBe(202);
      expect(video.headers.location).toBe(`/api/v1/jobs/${video.json.job_id}`);
    } finally {
      child.kill('SIGINT');
    }
  });
});
