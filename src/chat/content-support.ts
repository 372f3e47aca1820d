/**
 * Content support: whether the model's provider can take each content part (spec
 * "Content-part support per provider"), before any cost. Every refused part is 400
 * unsupported_content naming the message and part. Returns the image and PDF parts the
 * hold must price (media/media-hold.ts reads and prices them).
 */
import type { ChatRouting } from '../catalog/catalog-file.ts';
import { chatTable, PROVIDERS, type ChatProviderId } from '../providers/descriptors.ts';
import { GatewayError } from '../shared/errors.ts';
import type { ChatMessage } from '../shared/chat-wire.ts';
import type { MediaPart } from './media/media-hold.ts';

/** The spec's content-part support row of each chat provider, from its descriptor. */
const SUPPORT = chatTable(PROVIDERS, (chat) => chat.content);

const IMAGE_DATA_URL = /^data:image\/(png|jpeg|jpg|gif|webp);base64,/i;
const PDF_DATA_URL = /^data:application\/pdf;base64,/i;

export interface BillableMedia {
  /** The image and PDF parts, in order, for the hold to price. */
  parts: MediaPart[];
}

export function checkContentSupport(messages: ChatMessage[], provider: ChatProviderId, routing: ChatRouting): BillableMedia {
  const support = SUPPORT[provider];
  const parts: MediaPart[] = [];
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
          parts.push({ kind: 'image', param, url, detail: typeof detail === 'string' ? detail : undefined });
          return;
        }
        case 'file': {
          const file = part.file as { file_data?: unknown; file_id?: unknown } | undefined;
          if (file?.file_id !== undefined) throw refuse('Files are accepted only inline (file.file_data), not by file_id');
          if (typeof file?.file_data !== 'string' || !PDF_DATA_URL.test(file.file_data)) throw refuse('Files are accepted only as inline PDF data URLs');
          if (!support.pdfs || !routing.pdf) throw refuse('This model does not take PDF files');
          parts.push({ kind: 'pdf', param, dataUrl: file.file_data });
          return;
        }
        default:
          throw refuse(`Content parts of type '${part.type}' are not supported`);
      }
    });
  });
  return { parts };
}
