// The client a per-address limit counts (docs/decisions.md "Hardening: SSRF and login throttling").
// An IPv6 client is given a whole /64 (RFC 6177; often a /56 or /48) and picks any address in it at
// will (privacy addresses, RFC 8981), so a limit keyed by the full /128 would let one client rotate
// through 2^64 fresh counters. IPv6 is therefore counted by its /64; an IPv4-mapped address
// (::ffff:a.b.c.d, what a dual-stack socket reports for an IPv4 peer) is that IPv4 address, so the
// same client is one counter whichever socket it came in on. Every per-address limit uses this.
import ipaddr from 'ipaddr.js';

/** `request.ip` as a per-address limit keys it: IPv4 as a dotted quad, IPv6 as its /64 (`2001:db8:1:2::/64`). */
export function clientAddressKey(ip: string): string {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(ip); // IPv4-mapped IPv6 becomes the IPv4 address
  } catch {
    return ip; // not an address (never for a socket's peer): counted as given
  }
  if (addr.kind() === 'ipv4') return addr.toString();
  const prefix = (addr as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...prefix, 0, 0, 0, 0]).toString()}/64`;
}
