/**
 * The gateway's own API documentation (docs/api/*.md), loaded once at start-up and cut into
 * sections at their headings, for the MCP tools `search_docs` and `get_doc`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** docs/api from src/mcp (tsx) or from dist/src/mcp (compiled). */
export const DEFAULT_DOCS_DIR = [new URL('../../docs/api/', import.meta.url), new URL('../../../docs/api/', import.meta.url)]
  .map((url) => fileURLToPath(url))
  .find((path) => existsSync(path)) ?? fileURLToPath(new URL('../../docs/api/', import.meta.url));

export interface DocSection {
  heading: string;
  /** GitHub-style anchor of the heading. */
  anchor: string;
  /** The section's markdown, heading line included. */
  markdown: string;
}

export interface DocPage {
  /** File name without `.md`: what get_doc takes. */
  name: string;
  title: string;
  markdown: string;
  sections: DocSection[];
}

export interface SearchHit {
  page: string;
  title: string;
  section: string;
  anchor: string;
  snippet: string;
  score: number;
}

const SNIPPET_CHARS = 240;

export class DocsIndex {
  readonly pages: readonly DocPage[];
  private readonly byName = new Map<string, DocPage>();

  private constructor(pages: DocPage[]) {
    this.pages = pages;
    for (const page of pages) this.byName.set(page.name, page);
  }

  static fromDirectory(dir: string = DEFAULT_DOCS_DIR): DocsIndex {
    const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.md')).sort() : [];
    return DocsIndex.fromPages(files.map((file) => ({ name: file.slice(0, -3), markdown: readFileSync(join(dir, file), 'utf8') })));
  }

  static fromPages(files: { name: string; markdown: string }[]): DocsIndex {
    return new DocsIndex(files.map(({ name, markdown }) => {
      const sections = splitSections(markdown);
      return { name, title: sections[0]?.heading ?? name, markdown, sections };
    }));
  }

  page(name: string): DocPage | undefined {
    return this.byName.get(name.replace(/\.md$/, ''));
  }

  /** A section by its heading or anchor (case-insensitive). */
  section(page: DocPage, wanted: string): DocSection | undefined {
    const w = wanted.trim().toLowerCase().replace(/^#/, '');
    return page.sections.find((s) => s.anchor === w || s.heading.toLowerCase() === w);
  }

  /**
   * Sections ranked by how often the query's words occur (a heading counts five times as much);
   * sections holding every word rank first.
   */
  search(query: string, limit: number): SearchHit[] {
    const terms = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}_]{2,}/gu) ?? [])];
    if (terms.length === 0) return [];
    const hits: SearchHit[] = [];
    for (const page of this.pages) {
      for (const section of page.sections) {
        const heading = section.heading.toLowerCase();
        const text = section.markdown.toLowerCase();
        let score = 0;
        let matched = 0;
        for (const term of terms) {
          const inText = occurrences(text, term);
          if (inText > 0) matched++;
          score += inText + 5 * occurrences(heading, term);
        }
        if (score === 0) continue;
        if (matched === terms.length) score *= 2;
        hits.push({ page: page.name, title: page.title, section: section.heading, anchor: section.anchor, snippet: snippet(section.markdown, terms), score });
      }
    }
    hits.sort((a, b) => b.score - a.score || a.page.localeCompare(b.page));
    return hits.slice(0, limit);
  }
}

function splitSections(markdown: string): DocSection[] {
  const sections: DocSection[] = [];
  let current: { heading: string; lines: string[] } | undefined;
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,4} +(.+?) *#*$/.exec(line);
    if (heading !== null) {
      if (current !== undefined) sections.push(toSection(current));
      current = { heading: heading[1] as string, lines: [line] };
    } else if (current !== undefined) {
      current.lines.push(line);
    } else if (line.trim() !== '') {
      current = { heading: '', lines: [line] };
    }
  }
  if (current !== undefined) sections.push(toSection(current));
  return sections;
}

function toSection(raw: { heading: string; lines: string[] }): DocSection {
  return { heading: raw.heading, anchor: anchorOf(raw.heading), markdown: raw.lines.join('\n').trim() };
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
export function anchorOf(heading: string): string {
  return heading.toLowerCase().replace(/`/g, '').replace(/[^\p{L}\p{N}\s_-]/gu, '').trim().replace(/\s/g, '-');
}

function occurrences(text: string, term: string): number {
  let count = 0;
  for (let at = text.indexOf(term); at !== -1; at = text.indexOf(term, at + term.length)) count++;
  return count;
}

function snippet(markdown: string, terms: string[]): string {
  const lower = markdown.toLowerCase();
  const first = Math.min(...terms.map((t) => lower.indexOf(t)).filter((i) => i !== -1));
  const start = Math.max(0, first - SNIPPET_CHARS / 3);
  const text = markdown.slice(start, start + SNIPPET_CHARS).replace(/\s+/g, ' ').trim();
  return (start > 0 ? '…' : '') + text + (start + SNIPPET_CHARS < markdown.length ? '…' : '');
}
