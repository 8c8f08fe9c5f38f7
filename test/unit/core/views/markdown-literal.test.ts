/**
 * Store text in the editor's Markdown (tree tooltips, an agent tool's confirmation): rendered by a
 * real Markdown renderer with raw HTML and bare-URL links on (markdown-it with linkify, as GFM
 * autolinks `https://…`, `www.…` and e-mail addresses), it shows as exactly the same text and
 * nothing else. The real workbench is checked by test/ui/decisions.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { markdownLiteral } from '../../../../src/core/views/markdown-text';
import { rng } from '../../../helpers/rng';

// markdown-it ships no types of its own; this is the one call the test makes.
const MarkdownIt = createRequire(__filename)('markdown-it') as new (o: object) => {
  render(s: string): string;
};
const md = new MarkdownIt({ html: true, linkify: true });

const HOSTILE = [
  'https://evil.example/pixel.png?t=1)&nbsp;done www.evil.com mail@evil.com',
  'Tidy [docs](https://evil.example/lm) ![px](https://evil.example/px.png) <img src=x>',
  'echo `x` *done* [y](z)',
  '<https://evil.test> <mail@evil.com> http://evil.com/a_b_ ftp://evil.com',
  '[ref]\n\n[ref]: https://evil.test',
  '&lt;script&gt; &#91;x&#93; &amp; &nbsp; &#x26;',
  '# Approved already\n## two\nSetext\n===\nline\n---',
  '1. first\n1) second\n- item\n+ item\n* item\n> quoted',
  '    indented code\n\tand a tab\n```\nfence\n```\n~~~\ntilde\n~~~',
  '**bold** __it__ _it_ ~~del~~ `tick` ``two``',
  '| a | b |\n|---|---|\n| c | d |',
  '<!-- comment --> <div>block</div> <script>alert(1)</script>',
  'trailing spaces make a break  \nand a backslash too\\\nend',
  '***\n___\n- - -',
  '$(zap) :smile: [^1] [x] [ ]',
  'windows\r\nline\rends',
  '   leading and trailing   ',
  '\\ \\\\ \\*',
];

/** The text a browser shows for markdown-it's HTML: one line per paragraph, entities decoded. */
function shown(html: string): string {
  return html
    .split(/<\/p>\n/)
    .filter(Boolean)
    .map((p) => p.replace(/^<p>/, ''))
    .join('\n')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\u00a0/g, ' ');
}

/**
 * What the stored text should read as: spaces and tabs as spaces, and each line break a paragraph
 * break (so blank lines, and line breaks at the ends, leave nothing of their own).
 */
function expected(s: string): string {
  return s
    .replace(/\t/g, ' ')
    .split(/\r\n?|\n/)
    .filter(Boolean)
    .join('\n');
}

function assertLiteral(s: string): void {
  const html = md.render(markdownLiteral(s));
  assert.match(html, /^(<p>[^<]*<\/p>\n)*$/, `${JSON.stringify(s)} rendered as ${html}`);
  assert.equal(shown(html), expected(s), `${JSON.stringify(s)} rendered as ${html}`);
}

describe('markdownLiteral: store text shows as itself in Markdown', () => {
  it('escapes every ASCII punctuation character, writes spaces and tabs as &nbsp; and breaks as paragraphs', () => {
    assert.equal(markdownLiteral('a.b c\td'), 'a\\.b&nbsp;c&nbsp;d');
    assert.equal(markdownLiteral('one\ntwo'), 'one\n\ntwo');
    assert.equal(markdownLiteral('x@y.z'), 'x\\@y\\.z');
    assert.equal(markdownLiteral('héllo wörld'), 'héllo&nbsp;wörld');
    let ascii = '';
    for (let c = 0x21; c < 0x7f; c++) ascii += String.fromCharCode(c);
    const punct = ascii.replace(/[0-9A-Za-z]/g, '');
    assert.equal(punct.length, 32, 'CommonMark’s ASCII punctuation');
    assert.equal(markdownLiteral(punct), punct.replace(/./g, '\\$&'));
    assert.equal(markdownLiteral(''), '');
  });

  it('renders link-, image-, HTML- and block-shaped text as one paragraph per line of the same text', () => {
    for (const s of HOSTILE) assertLiteral(s);
  });

  it('renders any mix of punctuation, spaces, tabs, line breaks and letters as that text (seeded)', () => {
    const alphabet = [
      ...'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
      ' ',
      ' ',
      '\t',
      '\n',
      'a',
      'w',
      '1',
      'é',
      '→',
      'https://',
      'www.',
      '@x.com',
      '&nbsp;',
      '&#60;',
      '    ',
      '```',
    ];
    const next = rng(36);
    for (let n = 0; n < 2000; n++) {
      let s = '';
      const len = 1 + Math.floor(next() * 24);
      for (let i = 0; i < len; i++) s += alphabet[Math.floor(next() * alphabet.length)];
      assertLiteral(s);
    }
  });
});
