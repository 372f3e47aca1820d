/** The embeddings wire types every layer shares (the widely used embeddings-create format). */

/** What the client asked to embed: one text, texts, one list of token ids, or lists of token ids. */
export type EmbeddingsInput = string | string[] | number[] | number[][];

export type EncodingFormat = 'float' | 'base64';

/** One vector as the provider sent it: floats, or base64 of little-endian float32, passed on unchanged. */
export type Vector = number[] | string;
