/**
 * Markdown rendered as users meet it: markdown-it (what the VS Code packager renders READMEs with)
 * with raw HTML on, so a test sees whatever HTML untrusted text could smuggle in.
 */
import { createRequire } from 'node:module';

// markdown-it ships no types of its own; this is the one call the tests make.
const MarkdownIt = createRequire(__filename)('markdown-it') as new (o: object) => {
  render(s: string): string;
};

export const renderMarkdown = (md: string): string =>
  new MarkdownIt({ html: true, linkify: false }).render(md);
