/**
 * Untrusted text in Markdown (`loopx export`, the @loopx chat answers): rendered by a real
 * Markdown renderer with raw HTML on, it shows as the same words and nothing else: no link,
 * image, heading, list, HTML element or code block of its own.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { renderMarkdown } from '../../../helpers/markdown';
import { mdCode, mdQuote, mdText } from '../../../../src/core/views/markdown-text';

const md = { render: renderMarkdown };

const HOSTILE = [
  '[click](https://evil.test)',
  '![x](https://evil.test/p.png)',
  '<img src=x onerror=alert(1)>',
  '# Approved already',
  '1. first',
  '- item',
  '> quoted',
  '```\ncode\n```',
  '**bold** _it_ `tick`',
  '<https://evil.test>',
  '&lt;script&gt;',
  'line one\n# heading two\n<a href="x">y</a>',
];

/** The text a browser would show for rendered HTML (tags dropped, entities decoded). */
function shown(html: string): string {
  return html
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .trim();
}

describe('markdown-text: untrusted text is inert in Markdown', () => {
  it('mdText renders as one paragraph of the same words, with no element of its own', () => {
    for (const s of HOSTILE) {
      const html = md.render(mdText(s));
      assert.match(html, /^<p>[^<]*<\/p>\n$/, `${JSON.stringify(s)} rendered as ${html}`);
      // Line breaks are flattened to spaces; the words stay.
      assert.equal(shown(html).replace(/\s+/g, ' '), s.replace(/\s+/g, ' ').trim(), JSON.stringify(s));
    }
  });

  it('mdQuote keeps the lines as one block quote of plain paragraphs', () => {
    const html = md.render(mdQuote(HOSTILE.join('\n')));
    assert.match(html, /^<blockquote>\n<p>[^<]*<\/p>\n<\/blockquote>\n$/, html);
  });

  it('mdCode is one code span whatever backticks the text holds', () => {
    for (const s of ['echo `whoami`', '``` done', '`start', 'end`', ' lead', 'a ``` b `` c']) {
      const html = md.render(mdCode(s));
      const m = /^<p><code>([^<]*)<\/code><\/p>\n$/.exec(html);
      assert.ok(m, `${JSON.stringify(s)} rendered as ${html}`);
      // Flattened like every log line: outer spaces go, backticks stay.
      assert.equal(shown(m[1]!), s.trim());
    }
  });
});
