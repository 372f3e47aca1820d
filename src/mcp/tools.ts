/**
 * The MCP server of one request: five read-only tools over the catalog, prices and the API
 * docs, each with input and output schemas (answers carry `structuredContent`, checked by the
 * SDK against the output schema). Catalog answers are the bytes GET /models sends.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Catalog } from '../catalog/catalog.ts';
import { listFiltersSchema, type CatalogAnswers } from '../catalog/listing.ts';
import { modelDetailSchema, modelListSchema } from '../catalog/model-schema.ts';
import { GatewayError, internalError } from '../shared/errors.ts';
import type { DocsIndex } from './docs-index.ts';
import { estimateCost, estimateInput, estimateOutput } from './estimate.ts';

export interface McpToolDeps {
  catalog: Catalog;
  answers: CatalogAnswers;
  docs: DocsIndex;
  version: string;
}

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

const INSTRUCTIONS = 'Model Gateway: one API key and one prepaid credit balance (1 credit = USD 0.01) for chat, embedding, image, video and audio models of many providers, through an OpenAI-compatible API under /api/v1. These tools are read-only and free: browse the model catalog, price a run, and read the API documentation.';

const searchHit = z.object({
  page: z.string().describe('Page name, for get_doc.'),
  title: z.string(),
  section: z.string().describe('Heading of the matching section.'),
  anchor: z.string().describe('Section anchor, for get_doc.'),
  snippet: z.string(),
  score: z.number(),
});

/** The SDK's server class, loaded when the route is registered (see route.ts). */
export type McpServerClass = typeof McpServer;

export function buildMcpServer(Server: McpServerClass, deps: McpToolDeps): McpServer {
  const server = new Server({ name: 'model-gateway', version: deps.version }, { instructions: INSTRUCTIONS });
  const pageNames = deps.docs.pages.map((p) => p.name);

  server.registerTool('list_models', {
    title: 'List models',
    description: 'The model catalog, with the filters and answer of GET /api/v1/models: `{object, data, has_more, total}`. Without filters every runnable model is listed.',
    inputSchema: listFiltersSchema.shape,
    outputSchema: modelListSchema,
    annotations: READ_ONLY,
  }, async (filters) => answer(() => JSON.parse(deps.answers.list(filters).body) as Record<string, unknown>));

  server.registerTool('get_model', {
    title: 'Get a model',
    description: 'One model with its long description, configuration (input schema, default parameters) and examples, as GET /api/v1/models/{slug} answers. A provider model id also resolves.',
    inputSchema: { slug: z.string().min(1).describe('The model slug (the `id` of list_models), or a provider model id.') },
    outputSchema: modelDetailSchema,
    annotations: READ_ONLY,
  }, async ({ slug }) => answer(() => JSON.parse(deps.answers.detail(slug).body) as Record<string, unknown>));

  server.registerTool('estimate_cost', {
    title: 'Estimate the cost of a run',
    description: "What a run costs for an expected usage in the model's pricing unit (tokens in and out for token models; images, videos, outputs, seconds of output, characters or GPU seconds for the others), in credits and USD, priced exactly as billing prices it.",
    inputSchema: estimateInput,
    outputSchema: estimateOutput,
    annotations: READ_ONLY,
  }, async (input) => answer(() => estimateCost(deps.catalog, input)));

  server.registerTool('search_docs', {
    title: 'Search the API docs',
    description: "Full-text search over the gateway's API documentation (routes, request fields, errors and codes, limits, headers, billing, this MCP endpoint). Returns the best sections; read one with get_doc.",
    inputSchema: {
      query: z.string().min(1).max(500).describe('Words to look for, e.g. "429 rate limit headers".'),
      limit: z.number().int().min(1).max(20).default(5).describe('At most this many sections (default 5).'),
    },
    outputSchema: { results: z.array(searchHit) },
    annotations: READ_ONLY,
  }, async ({ query, limit }) => answer(() => ({ results: deps.docs.search(query, limit) })));

  server.registerTool('get_doc', {
    title: 'Read an API docs page',
    description: `One page of the gateway's API documentation as markdown, or one section of it. Pages: ${pageNames.join(', ')}.`,
    inputSchema: {
      page: (pageNames.length > 0 ? z.enum(pageNames as [string, ...string[]]) : z.string()).describe('Page name.'),
      section: z.string().optional().describe('A heading or anchor of the page (from search_docs); the whole page when omitted.'),
    },
    outputSchema: {
      page: z.string(),
      title: z.string(),
      markdown: z.string(),
      sections: z.array(z.object({ heading: z.string(), anchor: z.string() })),
    },
    annotations: READ_ONLY,
  }, async ({ page: name, section: wanted }) => answer(() => {
    const page = deps.docs.page(name);
    if (page === undefined) throw new GatewayError('not_found', `No docs page '${name}'. Pages: ${pageNames.join(', ')}.`);
    const section = wanted === undefined ? undefined : deps.docs.section(page, wanted);
    if (wanted !== undefined && section === undefined) {
      throw new GatewayError('not_found', `No section '${wanted}' on page '${name}'. Sections: ${page.sections.map((s) => s.anchor).join(', ')}.`);
    }
    return {
      page: page.name,
      title: page.title,
      markdown: section?.markdown ?? page.markdown,
      sections: page.sections.filter((s) => s.heading !== '').map((s) => ({ heading: s.heading, anchor: s.anchor })),
    };
  }));

  return server;
}

/** A tool answer: the object as structured content and as text; our error object as a tool error. */
function answer(produce: () => Record<string, unknown>): CallToolResult {
  try {
    const structured = produce();
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  } catch (error) {
    const gatewayError = error instanceof GatewayError ? error : internalError();
    return { content: [{ type: 'text', text: JSON.stringify(gatewayError.body()) }], isError: true };
  }
}
