/**
 * Bodies of strict-schema routes (embeddings, images, videos, audio speech, fine-tuning):
 * an unknown or invalid field → 400 validation_failed with `param` (the first field at
 * fault, as a path such as `input[3]`; null for the body as a whole) and `details`
 * `{formErrors, fieldErrors}`, fieldErrors keyed by top-level field. An unknown field is
 * listed under its own name.
 */
import type { z } from 'zod';
import { GatewayError, type ErrorDetails } from '../shared/errors.ts';

type Issue = z.core.$ZodIssue;

function pathText(path: readonly PropertyKey[]): string {
  let text = '';
  for (const part of path) text += typeof part === 'number' ? `[${part}]` : text === '' ? String(part) : `.${String(part)}`;
  return text;
}

export function parseStrictBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  // No prototype: a field named `constructor` or `__proto__` is a field like any other.
  const details: ErrorDetails = { formErrors: [], fieldErrors: Object.create(null) as Record<string, string[]> };
  const faults: { param: string; message: string }[] = [];
  const add = (field: string, message: string, param: string) => {
    (details.fieldErrors[field] ??= []).push(message);
    faults.push({ param, message });
  };
  for (const issue of result.error.issues as Issue[]) {
    if (issue.code === 'unrecognized_keys' && issue.path.length === 0) {
      for (const key of issue.keys) add(key, 'Unknown field.', key);
    } else if (issue.path.length === 0) {
      details.formErrors.push(issue.message);
    } else {
      add(String(issue.path[0]), issue.message, pathText(issue.path));
    }
  }
  const first = faults[0];
  const message = first === undefined ? details.formErrors.join('; ') : `${first.param}: ${first.message}`;
  throw new GatewayError('validation_failed', message, { param: first?.param ?? null, details });
}
