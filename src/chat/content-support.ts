/**
 * Content support: whether the model's provider can take each content part (spec
 * "Content-part support per provider"), before any cost. Every refused part is 400
 * unsupported_content naming the message and part. Returns what the hold must count.
 */
import type { ChatRouting } from '../catalog/catalog-file.ts';
import { chatTable, PROVIDERS, type ChatProviderId } from '../providers/descriptors.ts';
import { GatewayError } from '../shared/errors.ts';
import type { ChatMessage } from '../shared/chat-wire.ts';

/** The spec's content-part support row of each chat provider, from its descriptor. */
const SUPPORT = chatTable(PROVIDERS, (chat) => chat.content);

const IMAGE_DATA_URL = /^data:image\/(png|jpeg|jpg|gif|webp);base64,/i;
const PDF_DATA_URL = /^data:application\/pdf;base64,/i;

export interface BillableMedia {
  /** Input tokens the images and PDF pages may cost at most. */
  tokens: number;
}

export function checkContentSupport(messages: ChatMessage[], provider: ChatProviderId, routing: ChatRouting): BillableMedia {
  const support = SUPPORT[provider];
  let tokens = 0;
  messages.forEach((message, i) => {
    if (message.role !== 'user' || typeof message.content === 'string') return;
    message.content.forEach((part, j) => {
      const param = `messages[${i}].content[${j}]`;
      const refuse = (why: string) => new GatewayError('unsupported_content', `${why} (${param}).`, { param });
      switch (part.type) {
        case 'text':
          return;
        case 'image_url': {
          const raw = part.image_url;
          const url = typeof raw === 'string' ? raw : typeof raw === 'object' && raw !== null ? (raw as { url?: unknown }).url : undefined;
          const detail = typeof raw === 'object' && raw !== null ? (raw as { detail?: unknown }).detail : undefined;
          if (typeof url !== 'string') throw refuse('An image_url part needs a url');
          if (routing.images === null) throw refuse('This model does not take images');
          const isData = IMAGE_DATA_URL.test(url);
          const isHttps = url.startsWith('https://');
          if (isData ? !support.dataImages : isHttps ? !support.httpsImages : true) {
            throw refuse(`This model's provider does not take ${isData ? 'base64 images' : isHttps ? 'image URLs' : 'this image source'}; send ${support.dataImages ? 'a base64 data URL' : 'text only'}`);
          }
          tokens += detail === 'low' && routing.images.low_detail_tokens !== undefined ? routing.images.low_detail_tokens : routing.images.max_tokens;
          return;
        }
        case 'file': {
          const file = part.file as { file_data?: unknown; file_id?: unknown } | undefined;
          if (file?.file_id !== undefined) throw refuse('Files are accepted only inline (file.file_data), not by file_id');
          if (typeof file?.file_data !== 'string' || !PDF_DATA_URL.test(file.file_data)) throw refuse('Files are accepted only as inline PDF data URLs');
          if (!support.pdfs || !routing.pdf) throw refuse('This model does not take PDF files');
          const pages = countPdfPages(file.file_data);
          if (pages === 0) throw refuse('The PDF page count cannot be read');
          // Each page: one page image plus 3,000 text tokens.
          tokens += pages * ((routing.images?.max_tokens ?? 0) + 3000);
          return;
        }
        default:
          throw refuse(`Content parts of type '${part.type}' are not supported`);
      }
    });
  });
  return { tokens };
}

/** Pages of an inline PDF, read from its page objects; 0 when unreadable. */
function countPdfPages(dataUrl: string): number {
  const bytes = Buffer.from(dataUrl.slice(dataUrl.indexOf(',') + 1), 'base64').toString('latin1');
  if (!bytes.startsWith('%PDF-')) return 0;
  const matches = bytes.match(/\/Type\s*\/Page(?![a-zA-Z])/g);
  return matches === null ? 0 : matches.length;
}
