/**
 * robots.txt (RFC 9309, the Robots Exclusion Protocol), read for one path: pure.
 *
 * The groups whose `user-agent` lines name the product token (case-insensitive, `sluice`) are
 * obeyed, else those of `*` (§2.2.1); several groups for one agent are merged. Of the group's
 * `allow` and `disallow` rules, the one with the longest path matching the URL's path and query
 * decides, `allow` winning a tie (§2.2.2); `*` matches any characters, `$` ends the path
 * (§2.2.3); no match allows. An empty `disallow` allows everything. Lines other than these are
 * ignored (§2.2.4), and so is everything past `MAX_ROBOTS_BYTES` (§2.5 allows a limit of at least 500 KiB).
 */

/** The product token Sluice's fetches answer to in robots.txt. */
export const ROBOTS_AGENT = 'sluice';
/** The part of a robots.txt read, bytes (RFC 9309 §2.5: at least 500 KiB). */
export const MAX_ROBOTS_BYTES = 512 * 1024;

interface Rule {
  allow: boolean;
  path: string;
}

/** Percent-encodings normalised as RFC 9309 §2.2.2 compares: upper-case hex. */
const normalise = (path: string) => path.replace(/%[0-9a-f]{2}/gi, (s) => s.toUpperCase());

function matches(pattern: string, path: string): boolean {
  const anchored = pattern.endsWith('$');
  const body = anchored ? pattern.slice(0, -1) : pattern;
  const regex = new RegExp(`^${body.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}${anchored ? '$' : ''}`);
  return regex.test(path);
}

/** Whether `robotsTxt` lets `agent` fetch `pathAndQuery` (see the module). */
export function robotsAllows(robotsTxt: string, pathAndQuery: string, agent = ROBOTS_AGENT): boolean {
  const groups: { agents: string[]; rules: Rule[] }[] = [];
  let current: { agents: string[]; rules: Rule[] } | undefined;
  for (const raw of robotsTxt.slice(0, MAX_ROBOTS_BYTES).split(/\r\n|\r|\n/)) {
    const line = raw.replace(/#.*$/, '').trim();
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'user-agent') {
      if (!current || current.rules.length) {
        current = { agents: [], rules: [] };
        groups.push(current);
      }
      current.agents.push(value.toLowerCase());
    } else if ((key === 'allow' || key === 'disallow') && current) {
      current.rules.push({ allow: key === 'allow', path: normalise(value) });
    }
  }
  const own = groups.filter((g) => g.agents.some((a) => a !== '*' && agent.toLowerCase().startsWith(a.split('/')[0]!)));
  const rules = (own.length ? own : groups.filter((g) => g.agents.includes('*'))).flatMap((g) => g.rules);
  const path = normalise(pathAndQuery || '/');
  let best: Rule | undefined;
  for (const rule of rules) {
    if (rule.path === '') continue;
    if (!matches(rule.path, path)) continue;
    if (!best || rule.path.length > best.path.length || (rule.path.length === best.path.length && rule.allow)) best = rule;
  }
  return best ? best.allow : true;
}
