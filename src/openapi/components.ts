/** The named schemas of the OpenAPI document, each from the zod schema that validates it or describes the answer. */
import type { z } from 'zod';
import { addCreditsBody, newAccountBody, newKeyBody, patchAccountBody, patchKeyBody } from '../admin/routes.ts';
import { modelDetailSchema, modelListSchema } from '../catalog/model-schema.ts';
import { chatRequestSchema } from '../chat/chat-schema.ts';
import { countTokensSchema, messageSchema, messagesErrorSchema, messagesRequestSchema } from './messages-operations.ts';
import {
  accountSchema, chatChunkSchema, chatCompletionSchema, errorSchema, issuedKeySchema, jsonRpcRequestSchema, jsonRpcResponseSchema,
  keySchema, keyUsageSchema, ledgerEntrySchema, notificationSchema, statsSchema,
} from './schemas.ts';

export const COMPONENT_SCHEMAS: [name: string, schema: z.ZodType, io: 'input' | 'output'][] = [
  ['ChatCompletionRequest', chatRequestSchema, 'input'],
  ['ChatCompletion', chatCompletionSchema, 'output'],
  ['ChatCompletionChunk', chatChunkSchema, 'output'],
  ['MessagesRequest', messagesRequestSchema, 'input'],
  ['Message', messageSchema, 'output'],
  ['MessagesError', messagesErrorSchema, 'output'],
  ['MessagesTokenCount', countTokensSchema, 'output'],
  ['ModelDetail', modelDetailSchema, 'output'],
  ['ModelList', modelListSchema, 'output'],
  ['Error', errorSchema, 'output'],
  ['JsonRpcRequest', jsonRpcRequestSchema, 'input'],
  ['JsonRpcResponse', jsonRpcResponseSchema, 'output'],
  ['NewAccount', newAccountBody, 'input'],
  ['AccountPatch', patchAccountBody, 'input'],
  ['CreditsRequest', addCreditsBody, 'input'],
  ['NewKey', newKeyBody, 'input'],
  ['KeyPatch', patchKeyBody, 'input'],
  ['Account', accountSchema, 'output'],
  ['Key', keySchema, 'output'],
  ['IssuedKey', issuedKeySchema, 'output'],
  ['LedgerEntry', ledgerEntrySchema, 'output'],
  ['Notification', notificationSchema, 'output'],
  ['KeyUsage', keyUsageSchema, 'output'],
  ['Stats', statsSchema, 'output'],
];
