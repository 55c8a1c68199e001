/** Markdown as item HTML (markdown.ts): CommonMark rendered, raw HTML and unsafe links never through. */
import { describe, expect, it } from 'vitest';
import { markdownHtml } from './markdown.ts';

describe('markdownHtml', () => {
  it.each([
    ['paragraphs at blank lines', 'one\n\ntwo', '<p>one</p>\n<p>two</p>'],
    ['emphasis and links', '**bold** and [a link](https://example.com/a)', '<p><strong>bold</strong> and <a href="https://example.com/a">a link</a></p>'],
    ['bare URLs become links', 'see https://example.com/x', '<p>see <a href="https://example.com/x">https://example.com/x</a></p>'],
    ['raw HTML stays text', 'a <b>b</b> <script>alert(1)</script>', '<p>a &lt;b&gt;b&lt;/b&gt; &lt;script&gt;alert(1)&lt;/script&gt;</p>'],
    ['a javascript: link is not a link', '[x](javascript:alert(1))', '<p>[x](javascript:alert(1))</p>'],
    ['a data: image is dropped', '![x](data:image/png;base64,AAAA)', '<p></p>'],
    ['lists and quotes', '- one\n- two\n\n> quoted', '<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n<blockquote>\n<p>quoted</p>\n</blockquote>'],
    ['blank text', '  \n ', ''],
  ])('%s', (_name, markdown, html) => expect(markdownHtml(markdown)).toBe(html));
});
