/**
 * Images and PDFs held to the letter (spec "Content-part support per provider", hold rules):
 * a base64 image is held at the most the model bills for its pixel size, an https image at
 * the model's maximum, a PDF at its page count; every refusal comes before any cost. The
 * image facts of the fixture models are copied from the shipped catalog, so these holds are
 * the shipped models' holds. Expected token counts are worked out by hand from docs/catalog.md.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_CATALOG_FILE, loadConfig } from '../src/config.ts';
import { chatEntry } from './fixtures/catalog.ts';
import { INPUT_MICRO_PER_TOKEN, money, startChatHarness, type ChatHarness } from './helpers/chat.ts';
import type { TestGateway } from './helpers/gateway.ts';
import { compressionBombPdf, dataUrl, encryptedPdf, image, incrementallyUpdatedPdf, jpeg, pdf, pdfUrl, png, type Format } from './helpers/media.ts';

/** A shipped model's image facts. */
function shippedImages(slug: string): unknown {
  const file = JSON.parse(readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as { models: { slug: string; chat?: { images: unknown } }[] };
  const images = file.models.find((m) => m.slug === slug)?.chat?.images;
  if (images === undefined) throw new Error(`no shipped model ${slug}`);
  return images;
}

const vision = (slug: string, provider: string, images: unknown) =>
  chatEntry(slug, provider, { chat: { params: [], json_schema: 'native', images, pdf: true } });

const MODELS = [
  vision('gpt-tiles', 'provider_1', shippedImages('gpt-4.1')), // base 85, tile 170, low 85, max 1,445
  vision('gpt-patches', 'provider_1', shippedImages('gpt-6-luna')), // ×1.2, 2,500 patches (original 10,000), max 3,000
  vision('claude-pixels', 'provider_2', shippedImages('claude-sonnet-4-5')), // w×h/750, long side 1,568, max 1,600
  vision('claude-hires', 'provider_2', shippedImages('claude-sonnet-5-5')), // 28px patches, long side 2,576, max 4,784
  vision('gemini-tiles', 'provider_3', { formula: 'gemini_tiles', max_tokens: 4128 }), // 258 per 768px tile, at most 16 tiles
  vision('gemini-flat', 'provider_3', shippedImages('gemini-4-argon')), // 1,120 per image (media resolution high)
];

const TEXT = { type: 'text', text: 'Describe.' };
/** A text-only twin of a one-image request: the same text the tokenizer sees ("Describe.\n"). */
const BASELINE = [TEXT, { type: 'text', text: '' }];

interface Run {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- error bodies are inspected freely
  json: any;
  /** The ledger hold of the run, in micro-credits (undefined: nothing held). */
  hold: number | undefined;
}

async function run(gw: TestGateway, account: { key: string; accountId: string }, model: string, content: unknown[]): Promise<Run> {
  const r = await gw.api('/chat/completions', { key: account.key, body: { model, messages: [{ role: 'user', content }], max_tokens: 100 } });
  const jobId = r.headers['x-service-job-id'];
  const ledger = await gw.gateway.store.accounts.listLedger(account.accountId, 1000);
  const hold = ledger.find((e) => e.kind === 'hold' && e.jobId === jobId)?.amount;
  return { status: r.status, json: r.json, hold };
}

let h: ChatHarness;
let account: { key: string; accountId: string; keyId: string };
const baseline = new Map<string, number>();

/** Media tokens held for `content`: the run's hold minus the hold of the same text alone, at 125 micro-credits per input token. */
async function mediaTokens(model: string, content: unknown[]): Promise<number> {
  if (!baseline.has(model)) {
    const base = await run(h.gw, account, model, BASELINE);
    expect(base.status, JSON.stringify(base.json)).toBe(200);
    baseline.set(model, base.hold as number);
  }
  const r = await run(h.gw, account, model, content);
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  const extra = (r.hold as number) - (baseline.get(model) as number);
  expect(extra % INPUT_MICRO_PER_TOKEN).toBe(0);
  return extra / INPUT_MICRO_PER_TOKEN;
}

const imagePart = (url: string, detail?: string) => ({ type: 'image_url', image_url: detail === undefined ? { url } : { url, detail } });
const pdfPart = (url: string) => ({ type: 'file', file: { filename: 'doc.pdf', file_data: url } });

beforeAll(async () => {
  h = await startChatHarness({}, MODELS);
  account = await h.gw.account({ credits: 10_000 });
});
afterAll(async () => h.close());

/** [format, small, large] pixel sizes: each format gets its own pair so the rules see different shapes. */
const SIZES: [Format, [number, number], [number, number]][] = [
  ['png', [300, 200], [4000, 3000]],
  ['jpeg', [640, 480], [2048, 2048]],
  ['gif', [100, 100], [3000, 1000]],
  ['webp', [512, 512], [5000, 5000]],
];

/** Expected tokens per model for [small, large] of each format, worked out by hand (docs/catalog.md, "Image cost"). */
const EXPECTED: Record<string, Record<Format, [number, number]>> = {
  // 85 + 170 × tiles. 300×200: 1 tile. 4000×3000 → 2048×1536 → 1024×768: 4. 640×480: 2. 2048×2048 → 768×768: 4.
  // 100×100: 1. 3000×1000 → 2048×682.7: 4 × 2 = 8. 512×512: 1. 5000×5000 → 768×768: 4.
  'gpt-tiles': { png: [255, 765], jpeg: [425, 765], gif: [255, 1445], webp: [255, 765] },
  // ⌈patches × 1.2⌉. 300×200: 10×7 = 70 → 84. 4000×3000: 125×94 > 2,500, shrunk to 57×43 = 2,451 → 2,942.
  // 640×480: 300 → 360. 2048×2048: shrunk to 50×50 = 2,500 → 3,000. 100×100: 16 → 20.
  // 3000×1000: shrunk to 84×28 = 2,352 → 2,823. 512×512: 256 → 308. 5000×5000: 2,500 → 3,000.
  'gpt-patches': { png: [84, 2942], jpeg: [360, 3000], gif: [20, 2823], webp: [308, 3000] },
  // ⌈w×h/750⌉ after the long side ≤ 1,568, at most 1,600. 300×200: 80. 640×480: 410. 100×100: 14.
  // 3000×1000 → 1568×523: 1,094. 512×512: 350. The large PNG, JPEG and WebP reach the 1,600 cap.
  'claude-pixels': { png: [80, 1600], jpeg: [410, 1600], gif: [14, 1094], webp: [350, 1600] },
  // ⌈w/28⌉×⌈h/28⌉ after the long side ≤ 2,576, at most 4,784. 300×200: 11×8 = 88. 640×480: 23×18 = 414.
  // 100×100: 16. 3000×1000 → 2576×859: 92×31 = 2,852. 512×512: 19×19 = 361. The others reach the cap.
  'claude-hires': { png: [88, 4784], jpeg: [414, 4784], gif: [16, 2852], webp: [361, 4784] },
  // 258 when both sides ≤ 384, else 258 per 768px tile, at most 4,128. 640×480 and 512×512: 1 tile.
  // 2048×2048: 9 tiles = 2,322. 3000×1000: 4×2 = 2,064. 4000×3000 (24 tiles) and 5000×5000 (49) reach the cap.
  'gemini-tiles': { png: [258, 4128], jpeg: [258, 2322], gif: [258, 2064], webp: [258, 4128] },
  // Gemini 3 and 4: every image at its media resolution (1,120), whatever its size.
  'gemini-flat': { png: [1120, 1120], jpeg: [1120, 1120], gif: [1120, 1120], webp: [1120, 1120] },
};

describe('base64 images are held by their pixel size, per provider', () => {
  for (const [model, expected] of Object.entries(EXPECTED)) {
    it(`${model}: a small and a large PNG, JPEG, GIF and WebP, to the micro-credit`, async () => {
      for (const [format, small, large] of SIZES) {
        const smallTokens = await mediaTokens(model, [TEXT, imagePart(image(format, ...small))]);
        const largeTokens = await mediaTokens(model, [TEXT, imagePart(image(format, ...large))]);
        expect([smallTokens, largeTokens], `${format} ${small.join('×')} / ${large.join('×')}`).toEqual(expected[format]);
        expect(smallTokens).toBeLessThanOrEqual(largeTokens);
      }
    });
  }

  it('the hold is the text estimate plus the image tokens plus the output cap, and the run settles below it', async () => {
    const before = await money(h.gw, account.accountId);
    const r = await run(h.gw, account, 'gpt-tiles', [TEXT, imagePart(image('png', 4000, 3000))]);
    expect(r.status).toBe(200);
    // 765 image tokens at 125 micro-credits each, over the text-only hold (which includes 100 output tokens at 1,000).
    expect(r.hold).toBe((baseline.get('gpt-tiles') as number) + 765 * 125);
    const after = await money(h.gw, account.accountId);
    expect(after.held).toBe(0);
    const settled = (await h.gw.gateway.store.accounts.listLedger(account.accountId, 5)).find((e) => e.kind === 'settle');
    expect(before.balance - after.balance).toBe(settled?.amount);
    expect(settled?.amount).toBeLessThanOrEqual(r.hold as number);
  });

  it('a JPEG whose size marker sits 1.3 MB deep (behind metadata segments) is still read', async () => {
    expect(await mediaTokens('gpt-tiles', [TEXT, imagePart(dataUrl('image/jpeg', jpeg(3000, 1000, 20)))])).toBe(1445);
  });

  it("image/jpg is taken as JPEG; a data URL's media type is case-insensitive", async () => {
    expect(await mediaTokens('gpt-tiles', [TEXT, imagePart(dataUrl('image/jpg', jpeg(640, 480)))])).toBe(425);
    expect(await mediaTokens('gpt-tiles', [TEXT, imagePart(dataUrl('IMAGE/PNG', png(640, 480)))])).toBe(425);
  });
});

describe('detail', () => {
  it("detail 'low' holds less than 'high' for a large image on a model with a low-detail price (2048×2048 PNG)", async () => {
    const big = image('png', 2048, 2048);
    const high = await mediaTokens('gpt-tiles', [TEXT, imagePart(big, 'high')]);
    const low = await mediaTokens('gpt-tiles', [TEXT, imagePart(big, 'low')]);
    const auto = await mediaTokens('gpt-tiles', [TEXT, imagePart(big)]);
    expect({ high, low, auto }).toEqual({ high: 765, low: 85, auto: 765 });
  });

  it("detail 'low' changes nothing where the provider has no low-detail price (patch models, provider_2, provider_3)", async () => {
    const big = image('png', 2048, 2048);
    for (const model of ['gpt-patches', 'claude-pixels', 'gemini-tiles']) {
      expect(await mediaTokens(model, [TEXT, imagePart(big, 'low')]), model).toBe(await mediaTokens(model, [TEXT, imagePart(big, 'high')]));
    }
  });

  it("detail 'original' on a model with an original budget: 4000×4000 holds 10,000 patches × 1.2", async () => {
    const big = image('png', 4000, 4000);
    expect(await mediaTokens('gpt-patches', [TEXT, imagePart(big, 'original')])).toBe(12_000);
    expect(await mediaTokens('gpt-patches', [TEXT, imagePart(big, 'high')])).toBe(3000);
  });
});

describe('https images are held at the model maximum per image', () => {
  const url = 'https://example.com/cat.png';
  const cases: [string, string | undefined, number][] = [
    ['gpt-tiles', undefined, 1445],
    ['gpt-tiles', 'low', 85],
    ['gpt-patches', 'high', 3000],
    ['gpt-patches', 'original', 12_000],
    ['claude-pixels', undefined, 1600],
    ['claude-hires', undefined, 4784],
  ];
  for (const [model, detail, tokens] of cases) {
    it(`${model}${detail === undefined ? '' : ` detail ${detail}`}: ${tokens} tokens`, async () => {
      expect(await mediaTokens(model, [TEXT, imagePart(url, detail)])).toBe(tokens);
    });
  }
});

describe('PDFs are held at their page count: each page one page image plus 3,000 text tokens', () => {
  it('a 3-page PDF written with object streams and one with a classic cross-reference table both count 3 pages', async () => {
    const objectStreams = pdfUrl(await pdf(3, { objectStreams: true }));
    const classic = pdfUrl(await pdf(3, { objectStreams: false }));
    expect(Buffer.from(objectStreams.split(',')[1] as string, 'base64').toString('latin1')).toContain('/ObjStm');
    expect(Buffer.from(classic.split(',')[1] as string, 'base64').toString('latin1')).toMatch(/\bxref\b/);
    for (const [model, perImage] of [['gpt-tiles', 1445], ['gpt-patches', 3000], ['claude-pixels', 1600], ['gemini-flat', 1120]] as const) {
      expect(await mediaTokens(model, [TEXT, pdfPart(objectStreams)]), model).toBe(3 * (perImage + 3000));
      expect(await mediaTokens(model, [TEXT, pdfPart(classic)]), model).toBe(3 * (perImage + 3000));
    }
  });

  it('an incremental update that appends a page counts the updated page tree (3 pages, not 2)', async () => {
    expect(await mediaTokens('gpt-tiles', [TEXT, pdfPart(pdfUrl(await incrementallyUpdatedPdf()))])).toBe(3 * (1445 + 3000));
  });

  it('images and PDFs in one request add up, across messages', async () => {
    const r = await h.gw.api('/chat/completions', {
      key: account.key,
      body: {
        model: 'gpt-tiles',
        max_tokens: 100,
        messages: [
          { role: 'user', content: [TEXT, imagePart(image('png', 300, 200))] },
          { role: 'assistant', content: 'ok' },
          { role: 'user', content: [TEXT, pdfPart(pdfUrl(await pdf(2, { objectStreams: true }))), imagePart('https://example.com/x.png', 'low')] },
        ],
      },
    });
    expect(r.status).toBe(200);
    const hold = (await h.gw.gateway.store.accounts.listLedger(account.accountId, 10)).find((e) => e.kind === 'hold' && e.jobId === r.headers['x-service-job-id'])?.amount as number;
    const text = await h.gw.api('/chat/completions', {
      key: account.key,
      body: { model: 'gpt-tiles', max_tokens: 100, messages: [{ role: 'user', content: BASELINE }, { role: 'assistant', content: 'ok' }, { role: 'user', content: [TEXT, { type: 'text', text: '' }, { type: 'text', text: '' }] }] },
    });
    const textHold = (await h.gw.gateway.store.accounts.listLedger(account.accountId, 10)).find((e) => e.kind === 'hold' && e.jobId === text.headers['x-service-job-id'])?.amount as number;
    expect(hold - textHold).toBe((255 + 2 * (1445 + 3000) + 85) * 125);
  });
});

describe('refused before any cost: 400 unsupported_content naming the part, no ledger movement', () => {
  const cases: [string, () => Promise<unknown[]> | unknown[], RegExp][] = [
    ['a PNG declared as JPEG', () => [TEXT, imagePart(dataUrl('image/jpeg', png(100, 100)))], /PNG image but is declared as image\/jpeg/],
    ['a WebP declared as GIF', () => [TEXT, imagePart(image('webp', 10, 10).replace('image/webp', 'image/gif'))], /WebP image but is declared as image\/gif/],
    ['bytes that are no image', () => [TEXT, imagePart(dataUrl('image/png', Buffer.from('not an image at all')))], /not a PNG, JPEG, GIF or WebP image/],
    ['a PNG cut before its size', () => [TEXT, imagePart(dataUrl('image/png', png(100, 100).subarray(0, 20)))], /pixel size of this PNG image cannot be read/],
    ['a JPEG without a size marker', () => [TEXT, imagePart(dataUrl('image/jpeg', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0, 0xff, 0xd9])))], /pixel size of this JPEG image cannot be read/],
    ['a corrupt PDF', () => [TEXT, pdfPart(pdfUrl(Buffer.from('%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 9 0 R\nstartxref\n%%EOF')))], /PDF page count cannot be read/],
    ['a PDF cut in half', async () => [TEXT, pdfPart(pdfUrl((await pdf(3, { objectStreams: true })).subarray(0, 200)))], /PDF page count cannot be read/],
    ['an encrypted PDF', async () => [TEXT, pdfPart(pdfUrl(await encryptedPdf()))], /it is encrypted/],
    ['a data URL declared as a PDF that is not one', () => [TEXT, pdfPart(pdfUrl(Buffer.from('hello')))], /PDF header/],
    ['a PDF whose object stream inflates to 128 MiB (a compression bomb)', () => [TEXT, pdfPart(pdfUrl(compressionBombPdf()))], /PDF page count cannot be read/],
  ];
  for (const [name, content, message] of cases) {
    it(name, async () => {
      const acc = await h.gw.account({ credits: 50 });
      const before = await money(h.gw, acc.accountId);
      const ledgerBefore = await h.gw.gateway.store.accounts.listLedger(acc.accountId, 100);
      const sent = h.openai.requests.length;
      const r = await run(h.gw, acc, 'gpt-tiles', await content());
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'unsupported_content', type: 'invalid_request_error', param: 'messages[0].content[1]' });
      expect(r.json.error.message).toMatch(message);
      expect(r.hold).toBeUndefined();
      expect(await money(h.gw, acc.accountId)).toEqual(before);
      expect(await h.gw.gateway.store.accounts.listLedger(acc.accountId, 100)).toEqual(ledgerBefore);
      expect(h.openai.requests.length).toBe(sent);
    });
  }

  it('the encrypted PDF is refused on every provider that takes PDFs', async () => {
    const encrypted = pdfUrl(await encryptedPdf());
    for (const model of ['gpt-tiles', 'claude-pixels', 'gemini-flat']) {
      const r = await run(h.gw, account, model, [TEXT, pdfPart(encrypted)]);
      expect(r.status, model).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'unsupported_content', param: 'messages[0].content[1]' });
    }
  });
});

describe('a source the provider cannot take is refused before it is read (spec table)', () => {
  const cases: [string, string, () => Promise<unknown>][] = [
    ['provider_7 (text only): a base64 image', 'deepseek-test', async () => imagePart(image('png', 10, 10))],
    ['provider_7 (text only): a PDF', 'deepseek-test', async () => pdfPart(pdfUrl(await pdf(1)))],
    ['provider_3 (base64 only): an https image', 'gemini-tiles', async () => imagePart('https://example.com/a.png')],
    ['provider_1: an http (not https) image', 'gpt-tiles', async () => imagePart('http://example.com/a.png')],
    ['provider_1: an SVG data URL', 'gpt-tiles', async () => imagePart(dataUrl('image/svg+xml', Buffer.from('<svg/>')))],
  ];
  for (const [name, model, part] of cases) {
    it(`${name} → 400 unsupported_content, nothing held`, async () => {
      const acc = await h.gw.account({ credits: 50 });
      const before = await money(h.gw, acc.accountId);
      const r = await run(h.gw, acc, model, [TEXT, await part()]);
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'unsupported_content', param: 'messages[0].content[1]' });
      expect(await money(h.gw, acc.accountId)).toEqual(before);
    });
  }
});

describe('limits that protect the process', () => {
  let limited: ChatHarness;
  beforeAll(async () => {
    limited = await startChatHarness({ MAX_IMAGES_PER_REQUEST: '2', MAX_PDF_PAGES_PER_REQUEST: '4', MAX_PART_BYTES: '65536' }, MODELS);
  });
  afterAll(async () => limited.close());

  const refused: [string, () => Promise<unknown[]>, number, string, string, RegExp][] = [
    ['a third image (MAX_IMAGES_PER_REQUEST=2)', async () => [TEXT, imagePart(image('png', 10, 10)), imagePart('https://example.com/a.png'), imagePart(image('gif', 10, 10))], 400, 'invalid_request', 'messages[0].content[3]', /at most 2 images/],
    ['a second 3-page PDF (MAX_PDF_PAGES_PER_REQUEST=4)', async () => [TEXT, pdfPart(pdfUrl(await pdf(3))), pdfPart(pdfUrl(await pdf(3)))], 400, 'invalid_request', 'messages[0].content[2]', /at most 4 PDF pages.*to 6/],
    ['an image over MAX_PART_BYTES once decoded', async () => [TEXT, imagePart(dataUrl('image/jpeg', jpeg(640, 480, 2)))], 413, 'payload_too_large', 'messages[0].content[1]', /at most 65536 bytes/],
    ['a PDF over MAX_PART_BYTES once decoded', async () => [TEXT, pdfPart(pdfUrl(await pdf(1, { objectStreams: true, padding: 70_000 })))], 413, 'payload_too_large', 'messages[0].content[1]', /at most 65536 bytes/],
  ];
  for (const [name, content, status, code, param, message] of refused) {
    it(`${name} → ${status} ${code} naming the part, nothing held`, async () => {
      const acc = await limited.gw.account({ credits: 50 });
      const before = await money(limited.gw, acc.accountId);
      const r = await run(limited.gw, acc, 'gpt-tiles', await content());
      expect(r.status).toBe(status);
      expect(r.json.error).toMatchObject({ code, param });
      expect(r.json.error.message).toMatch(message);
      expect(await money(limited.gw, acc.accountId)).toEqual(before);
      expect(await limited.gw.gateway.store.accounts.listLedger(acc.accountId, 100)).toHaveLength(1); // the top-up only
    });
  }

  it('at the limits: 2 images and 4 PDF pages are accepted', async () => {
    const acc = await limited.gw.account({ credits: 50 });
    const r = await run(limited.gw, acc, 'gpt-tiles', [TEXT, imagePart(image('png', 10, 10)), imagePart(image('gif', 10, 10)), pdfPart(pdfUrl(await pdf(1))), pdfPart(pdfUrl(await pdf(3)))]);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
  });

  it('the limits are validated at start-up, naming the variable', () => {
    expect(() => loadConfig({ MAX_IMAGES_PER_REQUEST: 'many' })).toThrow(ConfigError);
    expect(() => loadConfig({ MAX_PDF_PAGES_PER_REQUEST: '-1' })).toThrow(/MAX_PDF_PAGES_PER_REQUEST/);
    expect(() => loadConfig({ MAX_PART_BYTES: '0' })).toThrow(/MAX_PART_BYTES/);
    expect(loadConfig({}).media).toEqual({ maxImages: 100, maxPdfPages: 100, maxPartBytes: 20 * 1024 * 1024 });
  });
});

describe('a 20 MiB data URL', () => {
  it('is accepted within the limits, and other requests are served while it is read', async () => {
    // A 3-page PDF padded with an unused 15 MiB stream: its data URL is about 20 MiB.
    const big = pdfUrl(await pdf(3, { objectStreams: true, padding: 15 * 1024 * 1024 }));
    expect(big.length).toBeGreaterThan(20 * 1024 * 1024);
    expect(big.length).toBeLessThan(21 * 1024 * 1024);
    const small = await h.gw.account({ credits: 100 });
    // Warm the PDF worker, so the figure below is the parse, not the worker's start.
    await mediaTokens('gpt-tiles', [TEXT, pdfPart(pdfUrl(await pdf(1)))]);

    let done = false;
    const started = performance.now();
    const bigRun = run(h.gw, account, 'gpt-tiles', [TEXT, pdfPart(big)]).then((r) => {
      done = true;
      return { ...r, ms: performance.now() - started };
    });
    const latencies: number[] = [];
    while (!done) {
      const t = performance.now();
      const r = await h.gw.api('/chat/completions', { key: small.key, body: { model: 'gpt-tiles', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 } });
      expect(r.status).toBe(200);
      if (!done) latencies.push(performance.now() - t);
    }
    const result = await bigRun;
    expect(result.status, JSON.stringify(result.json)).toBe(200);
    expect(result.hold).toBe((baseline.get('gpt-tiles') as number) + 3 * (1445 + 3000) * 125);
    // Served meanwhile, none stalled for long (the figure is printed for the record; the bound is loose for a shared machine).
    console.log(`20 MiB PDF request: ${Math.round(result.ms)} ms; ${latencies.length} small requests meanwhile, slowest ${Math.round(Math.max(...latencies))} ms`);
    expect(latencies.length).toBeGreaterThan(0);
    expect(Math.max(...latencies)).toBeLessThan(2000);
  });
});
