/** Structured output where the provider does not enforce schemas: an instruction, and fences stripped from the answer. */
import type { ResponseFormat } from '../chat/chat-request.ts';

export function schemaInstruction(format: Extract<ResponseFormat, { type: 'json_schema' }>): string {
  const about = format.description === undefined ? '' : ` (${format.description})`;
  return `Answer with a single JSON object only, no prose and no code fences, that validates against this JSON schema named "${format.name}"${about}:\n${JSON.stringify(format.schema)}`;
}

export const JSON_OBJECT_INSTRUCTION = 'Answer with a single JSON object only, no prose and no code fences.';

/** ```json … ``` → … (only when the whole answer is one fenced block). */
export function stripFences(text: string): string {
  const match = /^\s*```[a-zA-Z]*\s*\n([\s\S]*?)\n?```\s*$/.exec(text);
  return match === null ? text : (match[1] as string);
}
