/**
 * Input tokens the images and PDF pages of a request may cost at most (the spec's hold rules),
 * and the limits that protect the process: images per request, PDF pages per request, decoded
 * bytes per part. Each part is read in turn with a turn of the event loop between parts; PDFs
 * are parsed in a worker thread. Every refusal names the part (`messages[i].content[j]`).
 */
import type { ImageCost } from '../../catalog/catalog-file.ts';
import { GatewayError } from '../../shared/errors.ts';
import { base64DataUrl, decodedLength } from './data-url.ts';
import { imageTokens, maxImageTokens, type ImageDetail } from './image-cost.ts';
import { readImageSize } from './image-size.ts';
import { countPdfPages } from './pdf-pages.ts';

/** An image or PDF part that content support let through (its source is one the provider takes). */
export type MediaPart =
  | { kind: 'image'; param: string; url: string; detail: ImageDetail }
  | { kind: 'pdf'; param: string; dataUrl: string };

export interface MediaLimits {
  /** Image parts per request (PDF pages are counted apart). */
  maxImages: number;
  /** PDF pages per request, all PDFs together. */
  maxPdfPages: number;
  /** Decoded bytes of one base64 image or PDF. */
  maxPartBytes: number;
}

/** Text tokens held per PDF page, besides its page image (spec). */
export const PDF_PAGE_TEXT_TOKENS = 3000;

/**
 * The tokens to hold for every media part. `images` is the model's image cost (null: it takes
 * no images, so a PDF page is held as its text tokens only).
 */
export async function mediaHoldTokens(parts: MediaPart[], images: ImageCost | null, limits: MediaLimits): Promise<number> {
  checkCountsAndSizes(parts, limits);
  let tokens = 0;
  let pdfPages = 0;
  for (const part of parts) {
    const started = performance.now();
    const refuse = (why: string) => new GatewayError('unsupported_content', `${why} (${part.param}).`, { param: part.param });
    if (part.kind === 'image') {
      if (images === null) throw refuse('This model does not take images');
      const data = base64DataUrl(part.url);
      if (data === undefined) {
        tokens += maxImageTokens(images, part.detail);
        continue;
      }
      const size = readImageSize(data);
      if (!size.ok) throw refuse(`The image cannot be priced: ${size.reason}`);
      tokens += imageTokens(images, size, part.detail);
    } else {
      const data = base64DataUrl(part.dataUrl);
      if (data === undefined) throw refuse('Files are accepted only as inline PDF data URLs');
      const read = await countPdfPages(data);
      if (!read.ok) throw refuse(`The PDF page count cannot be read: ${read.message}`);
      pdfPages += read.pages;
      if (pdfPages > limits.maxPdfPages) {
        throw new GatewayError('invalid_request', `A request may carry at most ${limits.maxPdfPages} PDF pages; this PDF brings the request to ${pdfPages} (${part.param}).`, { param: part.param });
      }
      // Each page: one page image at the model's most per image, plus its text.
      tokens += read.pages * ((images?.max_tokens ?? 0) + PDF_PAGE_TEXT_TOKENS);
    }
    slowestPartMs = Math.max(slowestPartMs, performance.now() - started);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return tokens;
}

let slowestPartMs = 0;

/** The longest one part took to read and price (a PDF: its wait for a worker and its parse) since the last reset: /admin/v1/stats, the benchmark. */
export function slowestMediaPartMs(reset = false): number {
  const value = slowestPartMs;
  if (reset) slowestPartMs = 0;
  return value;
}

/** What can be refused before any part is read: too many images, a part larger than the limit. */
function checkCountsAndSizes(parts: MediaPart[], limits: MediaLimits): void {
  let images = 0;
  for (const part of parts) {
    if (part.kind === 'image' && ++images > limits.maxImages) {
      throw new GatewayError('invalid_request', `A request may carry at most ${limits.maxImages} images (${part.param}).`, { param: part.param });
    }
    const data = base64DataUrl(part.kind === 'image' ? part.url : part.dataUrl);
    if (data !== undefined && decodedLength(data) > limits.maxPartBytes) {
      throw new GatewayError('payload_too_large', `A base64 image or PDF may be at most ${limits.maxPartBytes} bytes once decoded; this one is ${decodedLength(data)} (${part.param}).`, { param: part.param });
    }
  }
}
