/** robots.txt read for one path (RFC 9309 and its examples): groups, longest match, allow on ties, wildcards. */
import { describe, expect, it } from 'vitest';
import { robotsAllows } from './robots.ts';

describe('robotsAllows', () => {
  it.each([
    ['no rules', '', '/a', true],
    ['disallow all for *', 'User-agent: *\nDisallow: /', '/news/a.html', false],
    ['an empty disallow allows', 'User-agent: *\nDisallow:', '/a', true],
    ['a prefix', 'User-agent: *\nDisallow: /private/', '/private/a.html', false],
    ['outside the prefix', 'User-agent: *\nDisallow: /private/', '/public/a.html', true],
    ['the longest match wins', 'User-agent: *\nDisallow: /news/\nAllow: /news/open/', '/news/open/a.html', true],
    ['allow wins a tie', 'User-agent: *\nDisallow: /a\nAllow: /a', '/a', true],
    ['a wildcard', 'User-agent: *\nDisallow: /*.pdf$', '/docs/x.pdf', false],
    ['$ anchors the end', 'User-agent: *\nDisallow: /*.pdf$', '/docs/x.pdf?y=1', true],
    ['our own group replaces *', 'User-agent: *\nDisallow: /\n\nUser-agent: Sluice\nAllow: /', '/a', true],
    ['another agent is not us', 'User-agent: otherbot\nDisallow: /', '/a', true],
    ['grouped agents share rules', 'User-agent: a\nUser-agent: sluice\nDisallow: /x', '/x/1', false],
    ['comments and case', '# hi\nUSER-AGENT: * # all\nDISALLOW: /X # no', '/X', false],
    ['the query is matched', 'User-agent: *\nDisallow: /*?print=', '/a?print=1', false],
    ['percent-encoding case', 'User-agent: *\nDisallow: /caf%c3%a9', '/caf%C3%A9/menu', false],
  ])('%s', (_name, robots, path, allowed) => {
    expect(robotsAllows(robots, path)).toBe(allowed);
  });
});
