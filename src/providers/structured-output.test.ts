import { describe, expect, it } from 'vitest';
import { StreamingFenceStripper, stripFences } from './structured-output.ts';

function streamed(pieces: string[]): string {
  const stripper = new StreamingFenceStripper();
  return pieces.map((p) => stripper.push(p)).join('') + stripper.end();
}

describe('code fences stripped from instruction-mode JSON', () => {
  const answers = ['```json\n{"a":1,"b":[1,2]}\n```', '```\n{"a":"x`y"}\n```\n', '{"plain":true}', '  ```json\n{"k":"v"}```', 'not json ``` at all'];
  for (const answer of answers) {
    it(`streamed in any split equals the non-stream strip: ${JSON.stringify(answer)}`, () => {
      const whole = stripFences(answer);
      for (let size = 1; size <= answer.length; size++) {
        const pieces: string[] = [];
        for (let i = 0; i < answer.length; i += size) pieces.push(answer.slice(i, i + size));
        expect(streamed(pieces), `piece size ${size}`).toBe(whole);
      }
    });
  }

  it('strips only a whole fenced answer', () => {
    expect(stripFences('```json\n{"a":1}\n```')).toBe('{"a":1}');
    expect(stripFences('{"a":1}')).toBe('{"a":1}');
  });
});
