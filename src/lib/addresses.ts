/**
 * Which addresses outbound requests may dial (docs/services.md#outbound-requests): the collector's
 * guard (`collect/fetch.ts`) and the webhook URL check of the management API share this one
 * policy. And how a client address is grouped by the per-address limits (`addressGroup`). Pure; no
 * traffic.
 */
import net from 'node:net';
import { normalizeIP } from '@fastify/rate-limit';
import ipaddr from 'ipaddr.js';

/** Only global unicast IPv6 addresses may be dialled (RFC 4291 §2.5.4, IANA IPv6 unicast assignments). */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/**
 * IPv6 ranges whose addresses embed an IPv4 address, and the byte offset of that address: these
 * are judged by the IPv4 address (a connection to them can reach it through the host's stack, a
 * tunnel or a translator).
 */
const EMBEDS_IPV4: { range: [ipaddr.IPv6 | ipaddr.IPv4, number]; at: number }[] = [
  { range: ipaddr.parseCIDR('::/96'), at: 12 }, // IPv4-compatible (RFC 4291 §2.5.5.1), with :: and ::1
  { range: ipaddr.parseCIDR('::ffff:0:0/96'), at: 12 }, // IPv4-mapped (RFC 4291 §2.5.5.2)
  { range: ipaddr.parseCIDR('::ffff:0:0:0/96'), at: 12 }, // IPv4-translated (RFC 2765 §2.1)
  { range: ipaddr.parseCIDR('64:ff9b::/96'), at: 12 }, // NAT64 well-known prefix (RFC 6052 §2.1, §2.2)
  { range: ipaddr.parseCIDR('2002::/16'), at: 2 }, // 6to4 (RFC 3056 §2)
];

/** The IPv4 address `address` embeds, when it is in one of {@link EMBEDS_IPV4}'s ranges. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const entry = EMBEDS_IPV4.find(({ range }) => address.match(range));
  if (!entry) return undefined;
  const bytes = address.toByteArray();
  return new ipaddr.IPv4(bytes.slice(entry.at, entry.at + 4));
}

/**
 * Whether the collector may connect to `address`, an IPv4 or IPv6 address in text form (an IPv6
 * zone index is allowed and ignored). Pure; no traffic.
 *
 * - IPv4: allowed when ipaddr.js classifies it as `unicast` (globally routable). Refused:
 *   loopback, private (RFC 1918), link-local (with the 169.254.169.254 cloud metadata address),
 *   carrier-grade NAT, `0.0.0.0/8`, broadcast, multicast, reserved, documentation, benchmarking.
 * - IPv6 forms that embed an IPv4 address — IPv4-compatible (`::7f00:1`), IPv4-mapped
 *   (`::ffff:7f00:1`), IPv4-translated (`::ffff:0:7f00:1`), NAT64 well-known prefix
 *   (`64:ff9b::7f00:1`) and 6to4 (`2002:7f00:1::`) — are judged by that IPv4 address.
 * - Any other IPv6 address: allowed only when global unicast (`2000::/3`) and not in a special
 *   range there (Teredo, benchmarking, documentation, ORCHID, AMT, AS112…). So loopback,
 *   link-local, unique-local (`fc00::/7`, e.g. `fd00:ec2::254`), multicast, discard and the
 *   local-use NAT64 prefix `64:ff9b:1::/48` (RFC 8215: the operator chooses where the IPv4
 *   address sits, and it is not globally reachable) are refused.
 *
 * A string that is not an IP address → false.
 */
export function isAllowedAddress(address: string): boolean {
  if (net.isIP(address) === 0) return false;
  try {
    const parsed = ipaddr.parse(address);
    if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
    const v6 = parsed as ipaddr.IPv6;
    const v4 = embeddedIPv4(v6);
    if (v4) return v4.range() === 'unicast';
    return v6.match(GLOBAL_UNICAST) && v6.range() === 'unicast';
  } catch {
    return false;
  }
}

/**
 * The group a client address is counted under by every per-address limit (docs/api.md#rate-limits,
 * docs/api.md#token-endpoint): an IPv4 address is itself; an IPv6 address counts per /64 (one
 * subscriber's prefix, RFC 6177 §2: anyone holding one address holds its whole /64), written as the
 * prefix's first address (`2001:db8:1:2::`); an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, RFC
 * 4291 §2.5.5.2, as a dual-stack socket reports IPv4 peers) counts as its IPv4 address. The
 * grouping is @fastify/rate-limit's `normalizeIP`, so the limits it counts and ours group alike.
 * Any other string is returned lower-cased. Pure.
 */
export function addressGroup(address: string): string {
  return normalizeIP(address, 64);
}
