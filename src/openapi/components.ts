/** The named schemas of the OpenAPI document, each from the zod schema that validates it or describes the answer. */
import type { z } from 'zod';
import { keyBodiesFor } from '../admin/key-requests.ts';
import { accountPatchBodyFor, addCreditsBody, newAccountBody } from '../admin/routes.ts';
import { modelDetailSchema, modelListSchema } from '../catalog/model-schema.ts';
import { chatRequestSchema } from '../chat/chat-schema.ts';
import { countTokensSchema, messageSchema, messagesErrorSchema, messagesRequestSchema } from './messages-operations.ts';
import {
  accountSchemaFor, chatChunkSchema, chatCompletionSchema, errorSchema, issuedKeySchemaFor, jsonRpcRequestSchema, jsonRpcResponseSchema,
  keySchemaFor, keyUsageSchema, ledgerEntrySchema, notificationSchema, statsSchema,
} from './schemas.ts';
import type { HoldLimit } from '../store/limits.ts';

/** The named schemas, with the settings of a limit table (src/store/limits.ts) in the account and key bodies and answers. */
export const componentSchemas = (limits: readonly HoldLimit[]): [name: string, schema: z.ZodType, io: 'input' | 'output'][] => [
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
  ['AccountPatch', accountPatchBodyFor(limits), 'input'],
  ['CreditsRequest', addCreditsBody, 'input'],
  ['NewKey', keyBodiesFor(limits).newKey, 'input'],
  ['KeyPatch', keyBodiesFor(limits).patchKey, 'input'],
  ['Account', accountSchemaFor(limits), 'output'],
  ['Key', keySchemaFor(limits), 'output'],
  ['IssuedKey', issuedKeySchemaFor(limits), 'output'],
  ['LedgerEntry', ledgerEntrySchema, 'output'],
  ['Notification', notificationSchema, 'output'],
  ['KeyUsage', keyUsageSchema, 'output'],
  ['Stats', statsSchema, 'output'],
];
