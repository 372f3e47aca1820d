/** Structured output where the provider does not enforce schemas: an instruction, and fences stripped from the answer. */
import type { ResponseFormat } from '../shared/chat-wire.ts';

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

/**
 * The same stripping on a stream: text before the first newline is held until it is
 * known whether the answer opens with a fence, and the tail is held back until the end
 * so a closing fence never reaches the client. The concatenated output equals
 * `stripFences` of the whole text.
 */
export class StreamingFenceStripper {
  private head = '';
  private decided = false;
  private fenced = false;
  private tail = '';

  push(text: string): string {
    if (!this.decided) {
      this.head += text;
      const trimmed = this.head.trimStart();
      if (trimmed.length < 3 && '```'.startsWith(trimmed)) return '';
      if (!trimmed.startsWith('```')) {
        this.decided = true;
        const out = this.head;
        this.head = '';
        return out;
      }
      const newline = trimmed.indexOf('\n');
      if (newline === -1) return '';
      this.decided = true;
      this.fenced = true;
      text = trimmed.slice(newline + 1);
      this.head = '';
    }
    if (!this.fenced) return text;
    // Hold back what could still be the closing fence.
    this.tail += text;
    const keep = /\n?`{0,3}\s*$/.exec(this.tail)?.[0].length ?? 0;
    const out = this.tail.slice(0, this.tail.length - keep);
    this.tail = this.tail.slice(this.tail.length - keep);
    return out;
  }

  end(): string {
    if (!this.decided) return this.head;
    if (!this.fenced) return '';
    const rest = this.tail.replace(/\n?```\s*$/, '');
    this.tail = '';
    return rest;
  }
}
