/**
 * Multipart bodies of the audio routes (@fastify/multipart over busboy), streamed: a
 * `Content-Length` over the route's ceiling is refused before the body is read, and the
 * file is kept only up to its limit (busboy skips the rest, so the connection stays usable).
 *   not multipart (another type, no part in the body at all), or broken framing → 400 invalid_body
 *   parts, but no `file` part → 400 missing_file; an empty one → 400 empty_file
 *   a file over the limit → 413 file_too_large
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../shared/errors.ts';

const MB = 1024 * 1024;

export interface MultipartLimits {
  /** Largest file (bytes). */
  fileBytes: number;
  /** Largest whole request (bytes), refused from its Content-Length before reading. */
  requestBytes: number;
}

export interface MultipartForm {
  file: { bytes: Buffer; filename: string | undefined; declaredType: string | undefined };
  /** Text fields; a repeated field (`timestamp_granularities[]`) as a list. */
  fields: Record<string, string | string[]>;
}

/** Registers multipart parsing in `scope` (an encapsulated plugin): a body that is not multipart reaches the route unread. */
export async function acceptMultipart(scope: FastifyInstance): Promise<void> {
  scope.removeAllContentTypeParsers();
  await scope.register(multipart, { throwFileSizeLimit: false });
  scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
}

/** A route's onRequest hook: 413 from the Content-Length alone, closing the connection instead of reading the body. */
export function refuseLargeRequests(limits: MultipartLimits) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const length = Number(request.headers['content-length']);
    if (Number.isFinite(length) && length > limits.requestBytes) {
      reply.header('connection', 'close');
      throw tooLarge(`The request is ${length} bytes; at most ${limits.requestBytes / MB} MB are read.`);
    }
  };
}

export function tooLarge(message: string): GatewayError {
  return new GatewayError('file_too_large', message);
}

/** Reads the form: every text field, and the one `file` part kept up to `fileBytes`. */
export async function readForm(request: FastifyRequest, limits: MultipartLimits): Promise<MultipartForm> {
  if (!request.isMultipart()) throw new GatewayError('invalid_body', 'The body must be multipart/form-data with a `file` part.');
  const fields: Record<string, string | string[]> = {};
  let file: MultipartForm['file'] | undefined;
  let truncated = false;
  let seen = 0;
  try {
    const parts = request.parts({ limits: { fileSize: limits.fileBytes, files: 1, fields: 32, fieldSize: 64 * 1024, parts: 40 } });
    for await (const part of parts) {
      seen++;
      if (part.type === 'field') {
        const value = typeof part.value === 'string' ? part.value : String(part.value);
        const seen = fields[part.fieldname];
        fields[part.fieldname] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
        continue;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of part.file) chunks.push(chunk as Buffer);
      if (part.fieldname !== 'file') continue;
      truncated = part.file.truncated;
      file = { bytes: Buffer.concat(chunks), filename: part.filename === '' ? undefined : part.filename, declaredType: part.mimetype };
    }
  } catch (thrown) {
    if (thrown instanceof GatewayError) throw thrown;
    throw new GatewayError('invalid_body', 'The multipart body could not be read (broken framing, or more than one file or 32 fields).');
  }
  // A body without a single part (no boundary line in it: raw bytes, or nothing) is not a form at all.
  if (seen === 0) throw new GatewayError('invalid_body', 'The body is not a multipart/form-data form: no part was found. Send the file as a `file` part (curl -F file=@…).');
  if (truncated) throw tooLarge(`The file is larger than ${limits.fileBytes / MB} MB.`);
  if (file === undefined) throw new GatewayError('missing_file', 'The form has no `file` part.', { param: 'file' });
  if (file.bytes.length === 0) throw new GatewayError('empty_file', 'The `file` part is empty.', { param: 'file' });
  return { file, fields };
}

export const LIMITS = {
  transcription: { fileBytes: 25 * MB, requestBytes: 26 * MB },
  voiceSample: { fileBytes: 10 * MB, requestBytes: 11 * MB },
} as const satisfies Record<string, MultipartLimits>;
