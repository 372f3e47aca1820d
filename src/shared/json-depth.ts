/**
 * How deep a parsed JSON value nests, found without recursion, so that no client input
 * can exhaust the stack (DECISIONS.md: validation depth 64). A scalar is level 0, an
 * object or array one level more than its deepest member; the walk stops as soon as
 * the bound is passed, so a hostile value costs no more than the part that was read.
 */

/** Levels a client value may nest (a tool's parameters, a json_schema.schema, tool-call arguments, a content part). */
export const MAX_JSON_DEPTH = 64;

/** True when `value` nests deeper than `maxDepth` levels of objects and arrays. */
export function nestsDeeperThan(value: unknown, maxDepth: number = MAX_JSON_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: { value: object; depth: number }[] = [{ value, depth: 1 }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (top.depth > maxDepth) return true;
    const members = Array.isArray(top.value) ? top.value : Object.values(top.value);
    for (const member of members) {
      if (typeof member === 'object' && member !== null) stack.push({ value: member as object, depth: top.depth + 1 });
    }
  }
  return false;
}
