/** The sanitizer of outside HTML (docs/api.md#publication): table-driven, input → what must (not) remain. */
import { describe, expect, it } from 'vitest';
import { safeImageUrl, safeUrl, sanitizeEmbed, sanitizeText } from './sanitize.ts';

describe('sanitizeText', () => {
  const cases: [string, string, RegExp[], RegExp[]][] = [
    ['script', '<p>hi<script>alert(1)</script></p>', [/<p>hi<\/p>/], [/script/i, /alert/]],
    ['event handler', '<img src="https://x.test/a.png" onerror="alert(1)">', [/<img src="https:\/\/x.test\/a.png"/], [/onerror/i, /alert/]],
    ['javascript link', '<a href="javascript:alert(1)">x</a>', [/<a [^>]*>x<\/a>/], [/javascript/i, /href/]],
    ['obfuscated javascript link', '<a href="  jAvAsCrIpT&#58;alert(1)">x</a>', [/>x<\/a>/], [/javascript/i, /alert/]],
    ['data link', '<a href="data:text/html,<script>alert(1)</script>">x</a>', [/>x<\/a>/], [/data:/, /script/]],
    ['http image', '<img src="http://x.test/a.png">', [], [/<img/]],
    ['style and iframe', '<style>body{}</style><iframe src="https://www.youtube.com/embed/x"></iframe>ok', [/^ok$/], [/style/, /iframe/]],
    ['svg', '<svg><a xlink:href="javascript:alert(1)"><text>t</text></a></svg>', [], [/svg/, /javascript/]],
    ['form', '<form action="https://x.test"><input name=a><button>b</button></form>', [], [/form/, /input/, /button/]],
    ['safe link', '<a href="https://example.com/a" onclick="x()">a</a>', [/href="https:\/\/example.com\/a"/, /rel="noopener noreferrer nofollow"/, /target="_blank"/], [/onclick/]],
    ['formatting', '<b>b</b> <em>e</em> <blockquote>q</blockquote>', [/<b>b<\/b>/, /<em>e<\/em>/, /<blockquote>q<\/blockquote>/], []],
  ];
  it.each(cases)('%s', (_name, input, present, absent) => {
    const out = sanitizeText(input);
    for (const re of present) expect(out).toMatch(re);
    for (const re of absent) expect(out).not.toMatch(re);
  });
});

describe('sanitizeEmbed', () => {
  const cases: [string, string, RegExp | null][] = [
    ['youtube iframe', '<iframe width="560" src="https://www.youtube.com/embed/abc" onload="x()" allowfullscreen></iframe>', /^<iframe[^>]*src="https:\/\/www.youtube.com\/embed\/abc"[^>]*sandbox="allow-scripts allow-same-origin allow-popups allow-presentation"/],
    ['vimeo iframe', '<iframe src="https://player.vimeo.com/video/1"></iframe>', /player.vimeo.com/],
    ['unknown host', '<iframe src="https://evil.test/embed"></iframe>', null],
    ['http youtube', '<iframe src="http://www.youtube.com/embed/abc"></iframe>', null],
    ['javascript iframe', '<iframe src="javascript:alert(1)"></iframe>', null],
    ['srcdoc', '<iframe srcdoc="<script>alert(1)</script>"></iframe>', null],
    ['script only', '<script src="https://www.youtube.com/iframe_api"></script>', null],
    ['https video', '<video src="https://cdn.test/v.mp4" autoplay onplay="x()"></video>', /^<video src="https:\/\/cdn.test\/v.mp4" controls(="")? preload="none"><\/video>$/],
  ];
  it.each(cases)('%s', (_name, input, expected) => {
    const out = sanitizeEmbed(input);
    if (expected === null) expect(out).toBe('');
    else expect(out).toMatch(expected);
    expect(out).not.toMatch(/onload|onplay|autoplay|<script|srcdoc|javascript/);
  });
});

describe('safe URLs', () => {
  it.each([
    ['https://a.test/x', 'https://a.test/x', 'https://a.test/x'],
    ['http://a.test/x', 'http://a.test/x', undefined],
    ['javascript:alert(1)', undefined, undefined],
    ['data:image/png;base64,AAAA', undefined, 'data:image/png;base64,AAAA'],
    ['data:text/html,<b>', undefined, undefined],
    ['/relative', undefined, undefined],
  ])('%s', (input, link, image) => {
    expect(safeUrl(input)).toBe(link);
    expect(safeImageUrl(input)).toBe(image);
  });
});
