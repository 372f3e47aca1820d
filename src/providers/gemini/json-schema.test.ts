import { describe, expect, it } from 'vitest';
import { toGeminiSchema } from './json-schema.ts';

describe('toGeminiSchema', () => {
  it('inlines #/definitions and JSON-pointer references; an unresolvable reference keeps its siblings', () => {
    expect(toGeminiSchema({
      type: 'object',
      definitions: { id: { type: 'string', pattern: '^[a-z]+$' } },
      properties: { a: { $ref: '#/definitions/id' }, b: { $ref: '#/properties/a' }, c: { $ref: 'https://example.com/x.json', description: 'remote' } },
    })).toEqual({
      type: 'object',
      properties: { a: { type: 'string', pattern: '^[a-z]+$' }, b: { type: 'string', pattern: '^[a-z]+$' }, c: { description: 'remote' } },
    });
  });

  it('exclusive bounds: exact for integers, the tighter bound wins, numbers say they are exclusive', () => {
    expect(toGeminiSchema({ type: 'integer', exclusiveMinimum: 2.5, minimum: 1, exclusiveMaximum: 10 })).toEqual({ type: 'integer', minimum: 3, maximum: 9 });
    expect(toGeminiSchema({ type: 'integer', exclusiveMinimum: 0, minimum: 5 })).toEqual({ type: 'integer', minimum: 5 });
    expect(toGeminiSchema({ type: 'number', minimum: 0, exclusiveMinimum: 0 })).toEqual({ type: 'number', minimum: 0, description: '(greater than 0, exclusive)' });
  });

  it('keeps what Gemini takes untouched: type arrays, anyOf, enum, formats, nullable, propertyOrdering', () => {
    const schema = {
      type: 'object',
      properties: { when: { type: 'string', format: 'date-time' }, n: { type: ['integer', 'null'] }, pick: { anyOf: [{ type: 'string', enum: ['a', 'b'] }, { type: 'null' }] }, opt: { type: 'string', nullable: true } },
      propertyOrdering: ['when', 'n', 'pick', 'opt'],
      minProperties: 1,
    };
    expect(toGeminiSchema(schema)).toEqual(schema);
  });

  it('constraints without a Gemini keyword move into the description instead of being lost', () => {
    expect(toGeminiSchema({ type: 'number', description: 'Price', multipleOf: 0.01, default: 1 })).toEqual({ type: 'number', description: 'Price (multipleOf: 0.01; default: 1)' });
    expect(toGeminiSchema({ type: 'object', additionalProperties: { type: 'string' } })).toEqual({ type: 'object', description: '(additional properties: {"type":"string"})' });
  });
});
