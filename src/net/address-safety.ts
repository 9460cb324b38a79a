// Address safety (C8.9): while private addresses are not allowed, a URL whose host is, or resolves
// to, anything but a public (global unicast) address is refused: loopback, private, link-local,
// unique-local, CGNAT, cloud metadata, multicast, reserved, documentation, benchmarking, ...
//
// Addresses are classified with ipaddr.js rather than hand-written ranges, and IPv6 forms that
// carry an IPv4 address are judged by that IPv4 address: a connection to `::ffff:127.0.0.1`,
// `64:ff9b::169.254.169.254` (NAT64) or `2002:7f00:1::` (6to4) may end at the embedded address.
// The rule, for an address after that unwrapping:
//   - IPv4: allowed only in ipaddr.js range `unicast` (so not 0/8, 10/8, 100.64/10, 127/8,
//     169.254/16, 172.16/12, 192.0.0/24, 192.0.2/24, 192.168/16, 198.18/15, 198.51.100/24,
//     203.0.113/24, multicast, 240/4, broadcast, ...);
//   - IPv6: allowed only in range `unicast` and inside 2000::/3, the only block IANA allocates for
//     global unicast (ipaddr.js calls everything it has no name for `unicast`, such as the
//     deprecated IPv4-compatible `::a.b.c.d`, which is why those are unwrapped first).
// Teredo (2001::/32) and the NAT64 local-use prefix 64:ff9b:1::/48 are refused outright: where the
// IPv4 address sits in them depends on a relay or an operator's choice, and no webhook endpoint
// needs either. The AWS IPv6 metadata address fd00:ec2::254 is unique-local, so refused; Azure's
// platform address 168.63.129.16 is public unicast, so refused by name (CLOUD_METADATA_IPV4).
//
// Every lookup of a name for an outbound request (save-time checks and the sockets of deliveries and
// rate requests) goes through one process-wide gate (`lookupAll`), see there.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as [IPv6, number];

const v4 = (hi: number, lo: number): IPv4 => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);

/** The IPv4 address an IPv6 address carries and may be delivered to, if it is such a form. */
export function embeddedIPv4(addr: IPv6): IPv4 | null {
  const p = addr.parts;
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated; `::` and `::1` land in 0/8).
  if (zeros(0, 5) && (p[5] === 0xffff || p[5] === 0)) return v4(p[6], p[7]);
  // ::ffff:0:a.b.c.d (SIIT, RFC 6145).
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return v4(p[6], p[7]);
  // 64:ff9b::a.b.c.d (NAT64 well-known prefix, RFC 6052).
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return v4(p[6], p[7]);
  // 2002:AABB:CCDD::/48 (6to4, RFC 3056): the IPv4 address is bits 16 to 48.
  if (p[0] === 0x2002) return v4(p[1], p[2]);
  return null;
}

/**
 * Cloud metadata and platform addresses inside public unicast space, which the range rule lets
 * through (the others, 169.254.169.254, 100.100.100.200, fd00:ec2::254, are in refused ranges).
 * Azure's 168.63.129.16 (WireServer: VM agent, health probes, DNS) answers only from inside Azure,
 * for the VM that asks, so a webhook to it would be a request from the service's own host (C8.9).
 * Compared after unwrapping, so its IPv4-mapped, NAT64 and 6to4 forms are refused too.
 */
const CLOUD_METADATA_IPV4 = new Set(['168.63.129.16']);

/** True unless `ip` is an IP address that is public (see the rule above). Not an IP: true. */
export function isBlockedIp(ip: string): boolean {
  if (!isIP(ip)) return true;
  let addr: IPv4 | IPv6;
  try {
    addr = ipaddr.parse(ip);
  } catch {
    return true;
  }
  if (addr.kind() === 'ipv6') addr = embeddedIPv4(addr as IPv6) ?? addr;
  if (addr.range() !== 'unicast') return true;
  if (addr.kind() === 'ipv4' && CLOUD_METADATA_IPV4.has(addr.toString())) return true;
  return addr.kind() === 'ipv6' && !(addr as IPv6).match(GLOBAL_UNICAST);
}

/** Names that are private whatever DNS says (`localhost.` and `LOCALHOST` too: URLs lowercase). */
export function isBlockedName(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return host === 'localhost' || host.endsWith('.localhost') || host === 'metadata.google.internal';
}

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * Longest target URL (normalised) and host name taken. Without them a long address was a 500
 * (PostgreSQL's btree refuses index rows over 2704 bytes: the unique (topic, address) keys of
 * subscriptions and store webhooks), and, while private addresses are allowed (no lookup at save
 * time), one manifest webhook with a host name of a few thousand characters made every fan-out
 * batch fail on the delivery queue's index of `target_host`: no store got a webhook any more (C8.2).
 * 2048 is the common practical URL limit (and the GDPR `dataExportUrl` bound); 253 is DNS's (RFC 1035).
 */
export const MAX_TARGET_URL_LENGTH = 2048;
export const MAX_HOSTNAME_LENGTH = 253;

/** Parse an absolute URL; `https` always, `http` only while private addresses are allowed. */
export function parseTargetUrl(value: unknown, allowPrivate: boolean): UrlCheck {
  if (typeof value !== 'string' || value.trim() === '') return { ok: false, reason: 'must be an absolute URL' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, reason: 'must be an absolute URL' };
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    return { ok: false, reason: allowPrivate ? 'must be an http or https URL' : 'must be an https URL' };
  }
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' };
  // Port 0 names no port a server listens on: saved, it was sent to the scheme's default port (443),
  // another address than the one saved and shown.
  if (url.port === '0') return { ok: false, reason: 'must not use port 0' };
  // The fragment is never sent (requests carry path and query), so it is no part of the address:
  // kept, `...?q#a` and `...?q#b` passed the (topic, address) duplicate rule as two addresses and
  // the receiver got each event twice under two webhook ids. Dropped here, where every target URL
  // passes, before the length check and in the form callers store.
  url.hash = '';
  // Checked on the normalised form (what is stored): percent-encoding and punycode only lengthen it.
  if (url.hostname.replace(/\.$/, '').length > MAX_HOSTNAME_LENGTH) return { ok: false, reason: `host name must be at most ${MAX_HOSTNAME_LENGTH} characters` };
  if (url.toString().length > MAX_TARGET_URL_LENGTH) return { ok: false, reason: `must be at most ${MAX_TARGET_URL_LENGTH} characters` };
  return { ok: true, url };
}

/**
 * A URL's host (brackets and all) that is refused without a lookup: a blocked IP literal or name.
 * Send time checks this first, as an IP literal is connected to without any lookup.
 */
export function isBlockedHost(urlHostname: string): boolean {
  const host = urlHostname.replace(/^\[|\]$/g, '');
  return isIP(host) ? isBlockedIp(host) : isBlockedName(host);
}

/** Resolve the host and refuse it when any address it resolves to is not public. */
export async function checkPublicHost(url: URL, allowPrivate: boolean): Promise<UrlCheck> {
  if (allowPrivate) return { ok: true, url };
  if (isBlockedHost(url.hostname)) return { ok: false, reason: 'points at a private address' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookupAllAsync(host, { verbatim: true }, SAVE_LOOKUP_TIMEOUT_MS)).map((a) => a.address);
    } catch {
      return { ok: false, reason: 'host does not resolve' };
    }
  }
  if (addresses.some((a) => isBlockedIp(a))) return { ok: false, reason: 'points at a private address' };
  return { ok: true, url };
}

export async function checkTargetUrl(value: unknown, allowPrivate: boolean): Promise<UrlCheck> {
  const parsed = parseTargetUrl(value, allowPrivate);
  return parsed.ok ? checkPublicHost(parsed.url, allowPrivate) : parsed;
}

/**
 * Outbound names are looked up with `dns.lookup` (getaddrinfo, so /etc/hosts and the system's
 * resolver settings hold), which runs on libuv's threadpool (4 threads unless UV_THREADPOOL_SIZE says
 * otherwise) and has no timeout of its own: a name whose nameserver never answers (any subdomain of
 * an attacker's domain; a dead resolver) holds a thread for as long as the system resolver retries.
 * Four such names would stall everything else on the pool for that long: password hashing (scrypt)
 * at login, file reads, zlib, every other delivery's and checkout's lookups. So at most
 * LOOKUP_CONCURRENCY lookups of outbound names are in getaddrinfo at once, process-wide, and the
 * others wait their turn; a lookup that has no answer by its deadline (waiting included) fails with
 * code `ETIMEOUT`, while the gate keeps counting its getaddrinfo until that really returns (the
 * thread is busy until then). Trusted names (the database, Redis, SMTP) do not go through the gate.
 *
 * The places are shared by every app and store, so one owner of names (`lookupOwner`: the domain a
 * name is registered under, whose nameservers answer for all its subdomains) must not be able to
 * take them all: an owner has at most one lookup in getaddrinfo at once (the line lets a lookup of
 * an owner with nothing in flight go first), and an owner whose lookup outlived a caller's deadline
 * is "timing out": its names are answered at once with the same `ETIMEOUT` for
 * TIMING_OUT_OWNER_MS, and for as long as that lookup still holds its thread, without taking a place.
 */
export const LOOKUP_CONCURRENCY = 2;
/** Deadline of a save-time lookup (a subscription's, webhook's or app URL's host). */
export const SAVE_LOOKUP_TIMEOUT_MS = 5000;
/** Deadline of `guardedLookup` (the webhook attempt's 10 s; a caller with a shorter deadline uses `guardedLookupWithin`). */
export const SEND_LOOKUP_TIMEOUT_MS = 10_000;
/**
 * How long an owner whose lookup timed out is answered `ETIMEOUT` at once. A minute, not RFC 9520's
 * five-minute most: an honest app's one slow lookup must not cost its buyers' rates and its
 * deliveries five minutes, while an attacker then holds a place for at most a deadline in every
 * minute and a deadline, so keeping both places full takes a dozen or more domains at once. Real
 * time, not the service clock (C12.1's test clock moves deadlines of the business; a nameserver's
 * silence is measured in real seconds).
 */
export const TIMING_OUT_OWNER_MS = 60_000;
/** Owners remembered as timing out, at most (the oldest are forgotten first). */
const TIMING_OUT_OWNERS_KEPT = 10_000;

/**
 * Second-level labels under which a country code's names are registered (`shop.co.uk`,
 * `store.com.au`): there a name's owner is three labels, elsewhere two. A guess at the registrable
 * domain without a public-suffix list: names under a hosting provider's shared domain (`*.herokuapp.com`)
 * share one owner, whose nameservers the provider runs.
 */
const COUNTRY_SECOND_LEVELS = new Set(['ac', 'co', 'com', 'edu', 'gen', 'go', 'gob', 'gov', 'ltd', 'mil', 'ne', 'net', 'nom', 'or', 'org', 'plc', 'sch']);

/** The domain whose nameservers answer for `hostname` (as far as can be told without asking): `a.b.evil.com` is `evil.com`, `x.evil.co.uk` is `evil.co.uk`. */
export function lookupOwner(hostname: string): string {
  const labels = hostname.toLowerCase().replace(/\.$/, '').split('.');
  const n = labels.length >= 3 && labels[labels.length - 1].length === 2 && COUNTRY_SECOND_LEVELS.has(labels[labels.length - 2]) ? 3 : 2;
  return labels.slice(-n).join('.');
}

type LookupAllCallback = (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void;

/** One getaddrinfo and the callers waiting for its answer. */
interface Flight {
  readonly key: string;
  readonly hostname: string;
  readonly options: LookupOptions;
  readonly owner: string;
  readonly callers: Set<LookupAllCallback>;
  /** performance.now() when it entered getaddrinfo; null while it waits for a place. */
  startedAt: number | null;
  /** Ran past a caller's deadline: its owner is timing out until it returns. */
  timedOut: boolean;
  backstop?: NodeJS.Timeout;
}

/**
 * Lookups asked for and not yet answered, by name and options: callers asking for the same name at
 * once share one getaddrinfo (a burst of checkouts opening connections to one app's host takes one
 * place at the gate, not one each), and a name that never answers holds one place however often it
 * is asked for. Only concurrent callers share: each answer is fresh (C8.9 checks every connection).
 */
const flights = new Map<string, Flight>();
/** Lookups waiting for a place, in arrival order. */
const waiting = new Set<Flight>();
/** The lookup in getaddrinfo of each owner that has one (so its size is the places taken). */
const running = new Map<string, Flight>();
/** Owners timing out, with the performance.now() until which they are (in the order marked, so of expiry). */
const timingOut = new Map<string, number>();

/** The outbound lookup gate's counts, one per getaddrinfo however many callers share it (tests). */
export const outboundLookups = (): { active: number; waiting: number } => ({ active: running.size, waiting: waiting.size });

const lookupTimeoutError = (hostname: string, timeoutMs: number) =>
  Object.assign(new Error(`lookup of ${hostname} had no answer in ${timeoutMs} ms`), { code: 'ETIMEOUT', hostname, syscall: 'getaddrinfo' }) as NodeJS.ErrnoException;
const ownerTimingOutError = (hostname: string, owner: string) =>
  Object.assign(new Error(`lookup of ${hostname} not tried: lookups under ${owner} recently had no answer`), { code: 'ETIMEOUT', hostname, syscall: 'getaddrinfo' }) as NodeJS.ErrnoException;

function isTimingOut(owner: string): boolean {
  if (running.get(owner)?.timedOut) return true;
  const until = timingOut.get(owner);
  if (until === undefined) return false;
  if (until > performance.now()) return true;
  timingOut.delete(owner);
  return false;
}

/** `f` outlived a caller's deadline in getaddrinfo: its owner's names, waiting or asked later, fail at once. */
function markTimingOut(f: Flight): void {
  if (f.timedOut) return;
  f.timedOut = true;
  clearTimeout(f.backstop);
  const now = performance.now();
  timingOut.delete(f.owner);
  timingOut.set(f.owner, now + TIMING_OUT_OWNER_MS);
  for (const [owner, until] of timingOut) {
    if (until > now && timingOut.size <= TIMING_OUT_OWNERS_KEPT) break;
    timingOut.delete(owner);
  }
  // Its callers still waiting (longer deadlines) are answered now; later callers are too, so none joins it.
  if (flights.get(f.key) === f) flights.delete(f.key);
  for (const caller of f.callers) caller(ownerTimingOutError(f.hostname, f.owner), []);
  for (const w of waiting) {
    if (w.owner !== f.owner) continue;
    waiting.delete(w);
    if (flights.get(w.key) === w) flights.delete(w.key);
    for (const caller of w.callers) caller(ownerTimingOutError(w.hostname, w.owner), []);
  }
}

/** Starts waiting lookups while places are free, in arrival order, skipping owners that have one in getaddrinfo. */
function admit(): void {
  for (const f of waiting) {
    if (running.size >= LOOKUP_CONCURRENCY) return;
    if (running.has(f.owner)) continue;
    waiting.delete(f);
    start(f);
  }
}

function start(f: Flight): void {
  running.set(f.owner, f);
  f.startedAt = performance.now();
  // However short its callers' deadlines, a getaddrinfo this long has timed out for anyone.
  f.backstop = setTimeout(markTimingOut, SEND_LOOKUP_TIMEOUT_MS, f).unref();
  try {
    dnsLookup(f.hostname, { ...f.options, all: true }, (err, addresses) => finish(f, err, err ? [] : (addresses as LookupAddress[])));
  } catch (err) {
    // A bad argument throws before anything reaches the threadpool (answered in a later turn,
    // when the caller is listening).
    process.nextTick(finish, f, err as NodeJS.ErrnoException, []);
  }
}

function finish(f: Flight, err: NodeJS.ErrnoException | null, addresses: LookupAddress[]): void {
  clearTimeout(f.backstop);
  if (running.get(f.owner) === f) running.delete(f.owner);
  if (flights.get(f.key) === f) flights.delete(f.key);
  for (const caller of f.callers) caller(err, addresses);
  admit();
}

/**
 * `dns.lookup(hostname, { ...options, all: true })` through the gate, failing with `ETIMEOUT` after
 * `timeoutMs` (waiting for the gate included), or at once while the name's owner is timing out.
 */
export function lookupAll(hostname: string, options: LookupOptions, timeoutMs: number, callback: LookupAllCallback): void {
  const owner = lookupOwner(hostname);
  if (isTimingOut(owner)) {
    process.nextTick(callback, ownerTimingOutError(hostname, owner), []);
    return;
  }
  const key = JSON.stringify([hostname, options.family ?? 0, options.hints ?? 0, options.verbatim ?? null, (options as { order?: string }).order ?? null]);
  let f = flights.get(key);
  if (!f) {
    f = { key, hostname, options, owner, callers: new Set(), startedAt: null, timedOut: false };
    flights.set(key, f);
    waiting.add(f);
    admit();
  }
  const flight = f;
  let done = false;
  const caller: LookupAllCallback = (err, addresses) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    flight.callers.delete(caller);
    callback(err, addresses);
  };
  flight.callers.add(caller);
  const timer = setTimeout(() => {
    caller(lookupTimeoutError(hostname, timeoutMs), []);
    if (flight.startedAt === null) {
      // Nobody left waiting for a lookup still waiting for the gate: it is not asked at all.
      if (!flight.callers.size && waiting.delete(flight) && flights.get(key) === flight) flights.delete(key);
    } else if (performance.now() - flight.startedAt >= timeoutMs - 1) {
      // The nameserver had this caller's whole deadline (not just the end of it after a wait in line).
      markTimingOut(flight);
    }
  }, timeoutMs);
  // A lookup waits only while others are in getaddrinfo, which keeps the process alive anyway.
  timer.unref();
}

const lookupAllAsync = (hostname: string, options: LookupOptions, timeoutMs: number): Promise<LookupAddress[]> =>
  new Promise((resolve, reject) => lookupAll(hostname, options, timeoutMs, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/**
 * A `lookup` for outbound sockets that refuses a host resolving to any blocked address (C8.9), so
 * the address checked is the address connected to: a name that resolved to a public address when
 * it was saved and to a private one now (DNS rebinding) is refused at send time. The error carries
 * code `BLOCKED_ADDRESS`; a lookup with no answer within `timeoutMs` (the caller's own deadline)
 * fails with code `ETIMEOUT`, a network error like any other lookup failure. IP literals never reach
 * a lookup: check them with `isBlockedHost` first.
 */
export function guardedLookupWithin(timeoutMs: number) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    if (isBlockedName(hostname)) return callback(blockedError(hostname), '', 0);
    lookupAll(hostname, options, timeoutMs, (err, list) => {
      if (err) return callback(err, '', 0);
      if (!list.length || list.some((a) => isBlockedIp(a.address))) {
        return callback(blockedError(hostname), '', 0);
      }
      // Node asks for `all` when it races address families (autoSelectFamily); otherwise one address.
      if (options.all) return (callback as any)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

/** `guardedLookupWithin` the webhook attempt's deadline. */
export const guardedLookup = guardedLookupWithin(SEND_LOOKUP_TIMEOUT_MS);

const blockedError = (hostname: string) =>
  Object.assign(new Error(`${hostname} is or resolves to a private address`), { code: 'BLOCKED_ADDRESS' }) as NodeJS.ErrnoException;

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
