/**
 * Media bytes made in the test: minimal valid image headers of a chosen pixel size (enough
 * for a header reader), and PDFs written with pdf-lib (object streams or a classic
 * cross-reference table), plus hand-made variants (encrypted, incrementally updated, corrupt).
 */
import { deflateSync } from 'node:zlib';
import { PDFDocument, StandardFonts } from 'pdf-lib';

export type Format = 'png' | 'jpeg' | 'gif' | 'webp';

export const MIME: Record<Format, string> = { png: 'image/png', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };

export function dataUrl(mime: string, bytes: Uint8Array): string {
  return `data:${mime};base64,${Buffer.from(bytes).toString('base64')}`;
}

const u16be = (n: number) => [(n >> 8) & 0xff, n & 0xff];
const u16le = (n: number) => [n & 0xff, (n >> 8) & 0xff];
const u24le = (n: number) => [n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff];
const u32be = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const u32le = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];
const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));

/** Signature, IHDR (8-bit RGB), IEND. CRCs are zero: header readers do not check them. */
export function png(width: number, height: number): Buffer {
  return Buffer.from([
    0x89, ...ascii('PNG\r\n\x1a\n'),
    ...u32be(13), ...ascii('IHDR'), ...u32be(width), ...u32be(height), 8, 2, 0, 0, 0, ...u32be(0),
    ...u32be(0), ...ascii('IEND'), ...u32be(0),
  ]);
}

/**
 * SOI, a JFIF APP0, optionally `metadataSegments` APP1 segments of ~64 KiB each (EXIF-like
 * metadata that pushes the size marker deep into the file), SOF0 with the size, EOI.
 */
export function jpeg(width: number, height: number, metadataSegments = 0): Buffer {
  const parts: number[][] = [[0xff, 0xd8], [0xff, 0xe0, ...u16be(16), ...ascii('JFIF\0'), 1, 1, 0, ...u16be(72), ...u16be(72), 0, 0]];
  for (let i = 0; i < metadataSegments; i++) {
    const body = new Array<number>(65_000).fill(0x20);
    parts.push([0xff, 0xe1, ...u16be(body.length + 2)], body);
  }
  parts.push([0xff, 0xc0, ...u16be(17), 8, ...u16be(height), ...u16be(width), 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1], [0xff, 0xd9]);
  return Buffer.from(parts.flat());
}

/** GIF89a logical screen descriptor and trailer. */
export function gif(width: number, height: number): Buffer {
  return Buffer.from([...ascii('GIF89a'), ...u16le(width), ...u16le(height), 0, 0, 0, 0x3b]);
}

/** RIFF/WEBP with an extended (VP8X) header: sizes up to 2^24. */
export function webp(width: number, height: number): Buffer {
  const chunk = [...ascii('VP8X'), ...u32le(10), 0, 0, 0, 0, ...u24le(width - 1), ...u24le(height - 1)];
  return Buffer.from([...ascii('RIFF'), ...u32le(4 + chunk.length), ...ascii('WEBP'), ...chunk]);
}

export const IMAGE: Record<Format, (width: number, height: number) => Buffer> = { png, jpeg, gif, webp };

export function image(format: Format, width: number, height: number): string {
  return dataUrl(MIME[format], IMAGE[format](width, height));
}

/** A PDF of `pages` pages with a line of text each; `padding` bytes of an unused stream make it as large as wanted. */
export async function pdf(pages: number, options: { objectStreams: boolean; padding?: number } = { objectStreams: true }): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < pages; i++) doc.addPage([300, 300]).drawText(`Page ${i + 1}`, { x: 20, y: 250, font, size: 18 });
  if (options.padding !== undefined) doc.context.register(doc.context.stream(new Uint8Array(options.padding).fill(0x41)));
  return doc.save({ useObjectStreams: options.objectStreams });
}

export function pdfUrl(bytes: Uint8Array): string {
  return dataUrl('application/pdf', bytes);
}

/** A classic-xref PDF whose trailer carries an /Encrypt dictionary (the pages themselves are readable). */
export async function encryptedPdf(): Promise<Uint8Array> {
  const text = Buffer.from(await pdf(3, { objectStreams: false })).toString('latin1');
  const at = text.lastIndexOf('trailer');
  const open = text.indexOf('<<', at);
  const encrypt = '/Encrypt << /Filter /Standard /V 1 /R 2 /O <00> /U <00> /P -4 >>\n';
  return Buffer.from(text.slice(0, open + 2) + '\n' + encrypt + text.slice(open + 2), 'latin1');
}

/**
 * A 2-page classic-xref PDF plus an incremental update that appends a third page: a new page
 * object, a new version of the page tree root, and a cross-reference section with /Prev.
 */
export async function incrementallyUpdatedPdf(): Promise<Uint8Array> {
  const base = Buffer.from(await pdf(2, { objectStreams: false })).toString('latin1');
  const doc = await PDFDocument.load(Buffer.from(base, 'latin1'));
  const pagesNum = Number(/\/Type \/Catalog\s*\/Pages (\d+) 0 R/.exec(base)?.[1]);
  if (!Number.isInteger(pagesNum)) throw new Error('no page tree');
  const kids = doc.getPages().map((p) => p.ref.toString());
  const size = doc.context.largestObjectNumber + 1;
  const rootRef = /\/Root (\d+ 0 R)/.exec(base)?.[1];
  const prev = /startxref\s+(\d+)/.exec(base.slice(base.lastIndexOf('startxref')))?.[1];
  let update = '\n';
  const pageOffset = base.length + update.length;
  update += `${size} 0 obj\n<< /Type /Page /Parent ${pagesNum} 0 R /MediaBox [0 0 300 300] >>\nendobj\n`;
  const pagesOffset = base.length + update.length;
  update += `${pagesNum} 0 obj\n<< /Type /Pages /Kids [${[...kids, `${size} 0 R`].join(' ')}] /Count 3 >>\nendobj\n`;
  const xrefOffset = base.length + update.length;
  const entry = (offset: number) => `${String(offset).padStart(10, '0')} 00000 n \n`;
  update += `xref\n${pagesNum} 1\n${entry(pagesOffset)}${size} 1\n${entry(pageOffset)}`;
  update += `trailer\n<< /Size ${size + 1} /Root ${rootRef} /Prev ${prev} >>\nstartxref\n${xrefOffset}\n%%EOF\n`;
  return Buffer.from(base + update, 'latin1');
}

/** A PDF whose only object stream inflates to 128 MiB of zeros (about 130 KiB compressed): a compression bomb. */
export function compressionBombPdf(): Buffer {
  const bomb = deflateSync(Buffer.alloc(128 * 1024 * 1024), { level: 9 });
  const head = Buffer.from(`%PDF-1.7\n1 0 obj\n<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length ${bomb.length} >>\nstream\n`, 'latin1');
  const tail = Buffer.from('\nendstream\nendobj\ntrailer\n<< /Root 2 0 R >>\n%%EOF\n', 'latin1');
  return Buffer.concat([head, bomb, tail]);
}
