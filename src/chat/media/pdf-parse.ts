/**
 * Pages of a PDF, read with pdf-lib's parser: classic cross-reference tables, cross-reference
 * streams, object streams and incremental updates (a later object replaces an earlier one).
 * Pages are counted by walking the page tree (the leaves actually present, not the /Count a
 * file claims), iteratively and visiting each object once, so no file can make it recurse or loop.
 * Runs in the PDF worker thread (pdf-pages.ts), never on the request thread.
 */
import { createRequire } from 'node:module';
import { PDFArray, PDFDict, PDFName, PDFParser, type PDFContext, type PDFObject } from 'pdf-lib';

export type PdfPages = { ok: true; pages: number } | { ok: false; reason: 'encrypted' | 'unreadable'; message: string };

/** The most one stream (an object or cross-reference stream) may inflate to: a compression bomb stops here. */
export const MAX_DECODED_STREAM_BYTES = 32 * 1024 * 1024;

interface DecodeStreamClass {
  prototype: { ensureBuffer(this: unknown, requested: number): Uint8Array };
}

let capped = false;

/** Makes every pdf-lib stream decoder refuse to grow past MAX_DECODED_STREAM_BYTES (once per thread). */
function capDecodedStreams(): void {
  if (capped) return;
  capped = true;
  const { default: DecodeStream } = createRequire(import.meta.url)('pdf-lib/cjs/core/streams/DecodeStream.js') as { default: DecodeStreamClass };
  const ensureBuffer = DecodeStream.prototype.ensureBuffer;
  DecodeStream.prototype.ensureBuffer = function (this: unknown, requested: number) {
    if (requested > MAX_DECODED_STREAM_BYTES) throw new Error(`a stream inflates to more than ${MAX_DECODED_STREAM_BYTES} bytes`);
    return ensureBuffer.call(this, requested);
  };
}

/** Bytes → page count, or why the file cannot be taken. */
export async function readPdfPages(bytes: Uint8Array): Promise<PdfPages> {
  capDecodedStreams();
  let context: PDFContext;
  try {
    context = await PDFParser.forBytesWithOptions(bytes, Infinity, false, false).parseDocument();
  } catch (error) {
    return { ok: false, reason: 'unreadable', message: `it cannot be parsed (${(error as Error).message.slice(0, 200)})` };
  }
  // Any /Encrypt entry in the trailer (or cross-reference stream): the pages cannot be read without a password.
  if (context.trailerInfo.Encrypt !== undefined) return { ok: false, reason: 'encrypted', message: 'it is encrypted' };
  let pages: number;
  try {
    pages = countPageLeaves(context);
  } catch (error) {
    return { ok: false, reason: 'unreadable', message: `its page tree cannot be read (${(error as Error).message.slice(0, 200)})` };
  }
  if (pages === 0) return { ok: false, reason: 'unreadable', message: 'no page can be found in it' };
  return { ok: true, pages };
}

const TYPE = PDFName.of('Type');
const KIDS = PDFName.of('Kids');
const PAGES = PDFName.of('Pages');
const PAGE = PDFName.of('Page');

function countPageLeaves(context: PDFContext): number {
  const catalog = context.lookup(context.trailerInfo.Root);
  if (!(catalog instanceof PDFDict)) return 0;
  const stack: (PDFObject | undefined)[] = [catalog.lookup(PAGES)];
  const seen = new Set<PDFObject>();
  let pages = 0;
  while (stack.length > 0) {
    const node = stack.pop();
    if (!(node instanceof PDFDict) || seen.has(node)) continue;
    seen.add(node);
    const type = node.lookup(TYPE);
    const kids = node.lookup(KIDS);
    if (type === PAGE) pages += 1;
    else if (kids instanceof PDFArray) for (let i = kids.size() - 1; i >= 0; i--) stack.push(kids.lookup(i));
  }
  return pages;
}
