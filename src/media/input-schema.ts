/**
 * A model's `configuration.input_schema` (a JSON-Schema-like object, docs/catalog.md) →
 * zod field schemas, for strict validation of a media request. Keywords understood:
 * type (or a list of types), enum, const, minimum, maximum, exclusiveMinimum,
 * exclusiveMaximum, minLength, maxLength, pattern, items, minItems, maxItems; `required`
 * and `properties` at the top. Anything else (description, format, …) is not checked.
 */
import { z } from 'zod';

type Spec = Record<string, unknown>;

export interface InputFields {
  /** Each input the model takes, as a zod schema of its value. */
  fields: Record<string, z.ZodType>;
  required: Set<string>;
}

const isSpec = (v: unknown): v is Spec => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

export function inputFields(schema: Record<string, unknown>): InputFields {
  const properties = isSpec(schema.properties) ? schema.properties : {};
  const fields: Record<string, z.ZodType> = {};
  for (const [name, spec] of Object.entries(properties)) fields[name] = valueSchema(isSpec(spec) ? spec : {}, 0);
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  return { fields, required };
}

function valueSchema(spec: Spec, depth: number): z.ZodType {
  const types = Array.isArray(spec.type) ? spec.type : spec.type === undefined ? [] : [spec.type];
  let schema: z.ZodType = types.length === 0 ? z.unknown() : oneOf(types.map((t) => typed(String(t), spec, depth)));
  const allowed = Array.isArray(spec.enum) ? spec.enum : 'const' in spec ? [spec.const] : undefined;
  if (allowed !== undefined) {
    const shown = allowed.map((v) => JSON.stringify(v)).join(', ');
    schema = schema.refine((v) => allowed.some((a) => a === v), { message: `must be one of ${shown}` });
  }
  return schema;
}

function oneOf(schemas: z.ZodType[]): z.ZodType {
  return schemas.length === 1 ? (schemas[0] as z.ZodType) : z.union(schemas as [z.ZodType, z.ZodType, ...z.ZodType[]]);
}

function typed(type: string, spec: Spec, depth: number): z.ZodType {
  switch (type) {
    case 'string': {
      let s = z.string();
      if (num(spec.minLength) !== undefined) s = s.min(num(spec.minLength) as number);
      if (num(spec.maxLength) !== undefined) s = s.max(num(spec.maxLength) as number);
      if (typeof spec.pattern === 'string') {
        try {
          s = s.regex(new RegExp(spec.pattern, 'u'));
        } catch {
          // A pattern this engine cannot compile is not checked.
        }
      }
      return s;
    }
    case 'integer':
    case 'number': {
      let n = type === 'integer' ? z.number().int() : z.number();
      if (num(spec.minimum) !== undefined) n = n.min(num(spec.minimum) as number);
      if (num(spec.maximum) !== undefined) n = n.max(num(spec.maximum) as number);
      if (num(spec.exclusiveMinimum) !== undefined) n = n.gt(num(spec.exclusiveMinimum) as number);
      if (num(spec.exclusiveMaximum) !== undefined) n = n.lt(num(spec.exclusiveMaximum) as number);
      return n;
    }
    case 'boolean':
      return z.boolean();
    case 'null':
      return z.null();
    case 'array': {
      // Item schemas are followed a few levels deep only: nothing recurses on a catalog without a bound.
      let a = z.array(isSpec(spec.items) && depth < 8 ? valueSchema(spec.items, depth + 1) : z.unknown());
      if (num(spec.minItems) !== undefined) a = a.min(num(spec.minItems) as number);
      if (num(spec.maxItems) !== undefined) a = a.max(num(spec.maxItems) as number);
      return a;
    }
    case 'object':
      return z.record(z.string(), z.unknown());
    default:
      return z.unknown();
  }
}
