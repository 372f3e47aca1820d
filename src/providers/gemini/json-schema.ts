/**
 * JSON Schema (as chat-completions clients write it) → the dialect Gemini takes in
 * `parametersJsonSchema` and `responseJsonSchema`. Gemini refuses, depending on the
 * API version and field, keywords such as `$ref`/`$defs`, `additionalProperties`,
 * `default`, `title`, `$schema`; so the schema is rewritten to a subset every version
 * takes, keeping each constraint Gemini enforces (docs/decisions.md):
 * - `$ref` to `#/$defs/…`, `#/definitions/…` or any `#/…` pointer is inlined (a
 *   recursive reference is unrolled to RECURSION_DEPTH levels, then left as its type);
 *   `$defs`/`definitions` are dropped;
 * - `const` → a one-value `enum`; `oneOf` → `anyOf`; `allOf` → merged into one schema;
 * - `exclusiveMinimum`/`exclusiveMaximum` → `minimum`/`maximum` (±1 for integers, exact;
 *   for numbers the bound becomes inclusive and the description says it is exclusive);
 * - `title` becomes the description when there is none; `default` and other constraints
 *   Gemini has no keyword for are written into the description, so the model still sees
 *   them; `additionalProperties: false` is dropped (Gemini only produces declared properties);
 * - `$schema`, `$id`, `$anchor`, `$comment`, `examples` and other annotations are dropped;
 * - `required` names only properties that exist.
 * Inlining is bounded (issue 10): a schema whose references would expand past
 * MAX_SCHEMA_NODES nodes or MAX_SCHEMA_DEPTH levels (a chain of definitions each used
 * twice doubles at every step) is refused with 400 invalid_request naming the field.
 */
import { GatewayError } from '../../shared/errors.ts';
import { MAX_JSON_DEPTH } from '../../shared/json-depth.ts';

type Json = Record<string, unknown>;

/** Keywords passed through (their sub-schemas converted). */
const KEPT = new Set([
  'type', 'format', 'description', 'nullable', 'enum', 'items', 'prefixItems', 'properties', 'required',
  'minItems', 'maxItems', 'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern',
  'minimum', 'maximum', 'anyOf', 'propertyOrdering',
]);

/** Dropped without a trace: annotations that constrain nothing. */
const ANNOTATIONS = new Set(['$schema', '$id', '$anchor', '$comment', '$defs', 'definitions', 'examples', 'example', 'readOnly', 'writeOnly', 'deprecated', 'title', '$dynamicAnchor']);

export const RECURSION_DEPTH = 3;
/** Schemas converted per schema, references inlined; far above any real tool schema. */
export const MAX_SCHEMA_NODES = 10_000;
export const MAX_SCHEMA_DEPTH = MAX_JSON_DEPTH;

/** What one conversion may still spend, and the field to name when it runs out. */
interface Budget {
  nodes: number;
  param: string;
}

const isJson = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `param` names the field in the 400 when the schema expands past the bounds. */
export function toGeminiSchema(schema: Record<string, unknown>, param = 'schema'): Record<string, unknown> {
  return convert(schema, schema, [], { nodes: MAX_SCHEMA_NODES, param }, 1);
}

function tooLarge(budget: Budget): GatewayError {
  return new GatewayError('invalid_request', `'${budget.param}' expands past ${MAX_SCHEMA_NODES} schemas or ${MAX_SCHEMA_DEPTH} levels once its references are inlined.`, { param: budget.param });
}

function resolve(root: Json, ref: string): Json | undefined {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').filter((s) => s !== '')) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined; // a malformed escape points nowhere
    }
    if (!isJson(node)) return undefined;
    node = node[key];
  }
  return isJson(node) ? node : undefined;
}

function convert(node: unknown, root: Json, refs: string[], budget: Budget, depth: number): Json {
  if (!isJson(node)) return {};
  if (--budget.nodes < 0 || depth > MAX_SCHEMA_DEPTH) throw tooLarge(budget);
  const sub = (child: unknown, childRefs = refs) => convert(child, root, childRefs, budget, depth + 1);
  let schema: Json = node;
  const ref = schema.$ref;
  if (typeof ref === 'string') {
    const target = resolve(root, ref);
    const { $ref: _ref, ...siblings } = schema;
    if (target === undefined) return sub(siblings);
    if (refs.filter((r) => r === ref).length >= RECURSION_DEPTH) {
      // Deep enough: what remains is the type, described.
      const type = typeof target.type === 'string' ? target.type : 'object';
      return { type, description: 'Recursive value (nesting is not expanded further).' };
    }
    return sub({ ...target, ...siblings }, [...refs, ref]);
  }
  if (Array.isArray(schema.allOf)) schema = mergeAllOf(schema, root);

  const out: Json = {};
  const notes: string[] = [];
  for (const [key, value] of Object.entries(schema)) {
    switch (key) {
      case 'properties':
        if (isJson(value)) out.properties = Object.fromEntries(Object.entries(value).map(([name, item]) => [name, sub(item)]));
        break;
      case 'items':
        out.items = Array.isArray(value) ? value.map((item) => sub(item)) : sub(value);
        break;
      case 'prefixItems':
      case 'anyOf':
        if (Array.isArray(value)) out[key] = value.map((item) => sub(item));
        break;
      case 'oneOf':
        if (Array.isArray(value)) out.anyOf = value.map((item) => sub(item));
        break;
      case 'const':
        out.enum = [value];
        break;
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        // Applied after the loop, against any inclusive bound.
        break;
      case 'default':
        notes.push(`default: ${JSON.stringify(value)}`);
        break;
      case 'additionalProperties':
        if (value !== false && value !== true) notes.push(`additional properties: ${JSON.stringify(value)}`);
        break;
      default:
        if (KEPT.has(key)) out[key] = value;
        else if (!ANNOTATIONS.has(key)) notes.push(`${key}: ${JSON.stringify(value)}`);
    }
  }
  if (out.description === undefined && typeof schema.title === 'string' && schema.title !== '') out.description = schema.title;
  if (Array.isArray(out.required)) {
    const props = isJson(out.properties) ? out.properties : {};
    out.required = (out.required as unknown[]).filter((name) => typeof name === 'string' && name in props);
  }
  exclusiveBound(schema, out, 'exclusiveMinimum', notes);
  exclusiveBound(schema, out, 'exclusiveMaximum', notes);
  if (notes.length > 0) out.description = [typeof out.description === 'string' ? out.description : '', `(${notes.join('; ')})`].filter((s) => s !== '').join(' ');
  return out;
}

/**
 * An exclusive bound → the inclusive keyword: exact for integers (±1), otherwise the
 * same number, said to be exclusive in the description. The tighter bound wins.
 */
function exclusiveBound(schema: Json, out: Json, key: 'exclusiveMinimum' | 'exclusiveMaximum', notes: string[]): void {
  const value = schema[key];
  if (typeof value !== 'number') return;
  const lower = key === 'exclusiveMinimum';
  const field = lower ? 'minimum' : 'maximum';
  const integer = schema.type === 'integer';
  const bound = integer ? (lower ? Math.floor(value) + 1 : Math.ceil(value) - 1) : value;
  const inclusive = out[field];
  if (typeof inclusive === 'number' && (lower ? inclusive >= bound : inclusive <= bound) && (integer || inclusive !== bound)) return;
  out[field] = bound;
  if (!integer) notes.push(`${lower ? 'greater' : 'less'} than ${value}, exclusive`);
}

/** `allOf` parts (references resolved) merged into the schema: properties united, required united, other keywords from the first that has them. */
function mergeAllOf(schema: Json, root: Json): Json {
  const { allOf, ...rest } = schema;
  const merged: Json = { ...rest };
  for (const raw of allOf as unknown[]) {
    const part = isJson(raw) && typeof raw.$ref === 'string' ? resolve(root, raw.$ref) : raw;
    if (!isJson(part)) continue;
    for (const [key, value] of Object.entries(part)) {
      if (key === 'properties' && isJson(value)) merged.properties = { ...(isJson(merged.properties) ? merged.properties : {}), ...value };
      else if (key === 'required' && Array.isArray(value)) merged.required = [...new Set([...(Array.isArray(merged.required) ? merged.required : []), ...value])];
      else if (merged[key] === undefined) merged[key] = value;
    }
  }
  return merged;
}
