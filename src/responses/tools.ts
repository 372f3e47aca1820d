/**
 * The Responses format's tools (DECISIONS "Agent formats: the Responses route"): `function`
 * tools, Codex's `custom` tools (free text or a grammar) and `namespace` groups, each as the
 * function a chat provider can call; built-in tools (web search, file search, code
 * interpreter, …) are dropped and named, never sent, since the gateway cannot price them.
 *
 * The table maps every flat function name back to what the client declared, so a call
 * comes back as the client's item: a `function_call` (with its `namespace`) or a
 * `custom_tool_call` whose input is the one string parameter `input`.
 */
import { bounded, invalid, isObject, present, type Json } from '../chat/chat-request.ts';
import type { FunctionTool, ToolChoice } from '../shared/chat-wire.ts';

/** What the client declared behind one flat function name. */
export interface DeclaredTool {
  kind: 'function' | 'custom';
  name: string;
  namespace?: string;
}

export interface ToolTable {
  /** The functions a chat provider sees, in declaration order. */
  functions: FunctionTool[];
  /** Flat name → the client's tool. */
  byFlatName: Map<string, DeclaredTool>;
  /** The client's tools as the native provider takes them (built-ins removed). */
  native: Json[];
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_TOOLS = 512;

/** The one parameter a custom tool's function takes: the tool's free-text input. */
const CUSTOM_INPUT = 'input';

export function emptyToolTable(): ToolTable {
  return { functions: [], byFlatName: new Map(), native: [] };
}

/** The flat name of a namespaced tool, unique across namespaces. */
export function flatName(name: string, namespace: string | undefined): string {
  return namespace === undefined ? name : `${namespace}__${name}`;
}

/**
 * Adds `list` (a request's `tools`, or an `additional_tools` item's) to `table`; built-in
 * tools are named in `ignored` as `tools.<type>`.
 */
export function addTools(table: ToolTable, list: unknown, at: string, ignored: string[]): void {
  if (!present(list)) return;
  if (!Array.isArray(list)) throw invalid(at, `'${at}' must be an array.`);
  list.forEach((tool, i) => {
    const where = `${at}[${i}]`;
    if (!isObject(tool) || typeof tool.type !== 'string') throw invalid(where, "Each tool needs a 'type'.");
    switch (tool.type) {
      case 'function':
      case 'custom':
        declare(table, tool, where, undefined);
        table.native.push(tool);
        return;
      case 'namespace': {
        const ns = tool.name;
        if (typeof ns !== 'string' || !NAME.test(ns)) throw invalid(`${where}.name`, 'A namespace name is 1–64 letters, digits, underscores or dashes.');
        if (!Array.isArray(tool.tools)) throw invalid(`${where}.tools`, "A namespace needs a 'tools' array.");
        tool.tools.forEach((inner, j) => {
          if (!isObject(inner) || (inner.type !== 'function' && inner.type !== 'custom')) throw invalid(`${where}.tools[${j}]`, "A namespace holds tools of type 'function' or 'custom'.");
          declare(table, inner, `${where}.tools[${j}]`, ns);
        });
        table.native.push(tool);
        return;
      }
      default:
        // A built-in tool: never priced, never sent to any provider.
        ignored.push(`tools.${tool.type.replace(/[^a-zA-Z0-9_.-]/g, '_').slice(0, 64)}`);
    }
  });
  if (table.functions.length > MAX_TOOLS) throw invalid(at, `At most ${MAX_TOOLS} tools may be declared.`);
}

function declare(table: ToolTable, tool: Json, where: string, namespace: string | undefined): void {
  const name = tool.name;
  if (typeof name !== 'string' || !NAME.test(name)) throw invalid(`${where}.name`, 'Tool names are 1–64 letters, digits, underscores or dashes.');
  if (present(tool.description) && typeof tool.description !== 'string') throw invalid(`${where}.description`, 'must be a string.');
  const flat = flatName(name, namespace);
  if (table.byFlatName.has(flat)) return;
  const description = typeof tool.description === 'string' ? tool.description : undefined;
  if (tool.type === 'function') {
    if (present(tool.parameters) && !isObject(tool.parameters)) throw invalid(`${where}.parameters`, 'must be a JSON schema object.');
    bounded(tool.parameters, `${where}.parameters`);
    if (present(tool.strict) && typeof tool.strict !== 'boolean') throw invalid(`${where}.strict`, 'must be a boolean.');
    table.functions.push({
      name: flat,
      description,
      parameters: isObject(tool.parameters) ? tool.parameters : undefined,
      strict: typeof tool.strict === 'boolean' ? tool.strict : undefined,
    });
    table.byFlatName.set(flat, { kind: 'function', name, ...(namespace === undefined ? {} : { namespace }) });
    return;
  }
  table.functions.push({ name: flat, description: customDescription(description, tool.format, where), parameters: CUSTOM_PARAMETERS, strict: undefined });
  table.byFlatName.set(flat, { kind: 'custom', name, ...(namespace === undefined ? {} : { namespace }) });
}

const CUSTOM_PARAMETERS = {
  type: 'object',
  properties: { [CUSTOM_INPUT]: { type: 'string', description: 'The whole input of the tool, as free text.' } },
  required: [CUSTOM_INPUT],
  additionalProperties: false,
};

/** A custom tool's grammar travels in its description (a chat function cannot constrain a string to one). */
function customDescription(description: string | undefined, format: unknown, where: string): string | undefined {
  if (!present(format)) return description;
  if (!isObject(format)) throw invalid(`${where}.format`, 'must be an object.');
  if (format.type === 'text') return description;
  if (format.type !== 'grammar' || typeof format.definition !== 'string') throw invalid(`${where}.format`, "A custom tool's format is {type: 'text'} or {type: 'grammar', syntax, definition}.");
  const syntax = typeof format.syntax === 'string' ? format.syntax : 'lark';
  return `${description ?? ''}\n\nThe input must follow this ${syntax} grammar:\n${format.definition}`.trim();
}

/** A chat tool call's arguments as the custom tool's input (the one `input` string), else the text as it came. */
export function customInput(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (isObject(parsed) && typeof parsed[CUSTOM_INPUT] === 'string') return parsed[CUSTOM_INPUT];
  } catch {
    // Not JSON: the model wrote the input itself.
  }
  return args;
}

/** A custom tool call's input as the chat arguments of its function. */
export function customArguments(input: string): string {
  return JSON.stringify({ [CUSTOM_INPUT]: input });
}

/**
 * `tool_choice`: `none`, `auto`, `required`, a named function or custom tool, or
 * `allowed_tools` (its mode); a choice that requires a built-in tool → 400, since that tool is dropped.
 */
export function parseToolChoice(v: unknown, table: ToolTable): ToolChoice | undefined {
  if (!present(v)) return undefined;
  if (v === 'none' || v === 'auto' || v === 'required') return v;
  if (!isObject(v) || typeof v.type !== 'string') throw invalid('tool_choice', "'tool_choice' must be 'none', 'auto', 'required' or an object with a 'type'.");
  if (v.type === 'function' || v.type === 'custom') {
    if (typeof v.name !== 'string') throw invalid('tool_choice.name', `A '${v.type}' tool_choice needs 'name'.`);
    const flat = flatName(v.name, typeof v.namespace === 'string' ? v.namespace : undefined);
    if (!table.byFlatName.has(flat)) throw invalid('tool_choice', `tool_choice names the tool '${v.name}', which is not in 'tools'.`);
    return { name: flat };
  }
  if (v.type === 'allowed_tools') return v.mode === 'required' ? 'required' : 'auto';
  throw invalid('tool_choice', `tool_choice requires the built-in tool '${v.type}', which the gateway does not run.`);
}
