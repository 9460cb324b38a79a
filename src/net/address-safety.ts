// Address safety (C8.9): while private addresses are not allowed, a URL whose host is, or resolves
// to, a loopback, private, link-local, unique-local, CGNAT or cloud-metadata address is refused.
import { lookup } from 'node:dns/promises';
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['fd00:ec2::', 32],
] as const) blocked.addSubnet(net, prefix, 'ipv6');

export function isBlockedIp(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return blocked.check(ip, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
    if (mapped) return blocked.check(mapped[1], 'ipv4');
    return blocked.check(ip, 'ipv6');
  }
  return true;
}

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

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
  return { ok: true, url };
}

/** Resolve the host and refuse it when any address it resolves to is not public. */
export async function checkPublicHost(url: URL, allowPrivate: boolean): Promise<UrlCheck> {
  if (allowPrivate) return { ok: true, url };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost') || host === 'metadata.google.internal') {
    return { ok: false, reason: 'points at a private address' };
  }
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      return { ok: false, reason: 'host does not resolve' };
    }
  }
  if (addresses.some(isBlockedIp)) return { ok: false, reason: 'points at a private address' };
  return { ok: true, url };
}

export async function checkTargetUrl(value: unknown, allowPrivate: boolean): Promise<UrlCheck> {
  const parsed = parseTargetUrl(value, allowPrivate);
  return parsed.ok ? checkPublicHost(parsed.url, allowPrivate) : parsed;
}

/**
 * A `lookup` for outbound sockets that refuses a host resolving to any blocked address (C8.9), so
 * the address checked is the address connected to: a name that resolved to a public address when
 * it was saved and to a private one now (DNS rebinding) is refused at send time. The error carries
 * code `BLOCKED_ADDRESS`. IP literals never reach a lookup: check them with `isBlockedIp` first.
 */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const list = addresses as LookupAddress[];
    if (!list.length || list.some((a) => isBlockedIp(a.address))) {
      const blockedErr = Object.assign(new Error(`${hostname} resolves to a private address`), { code: 'BLOCKED_ADDRESS' });
      return callback(blockedErr as NodeJS.ErrnoException, '', 0);
    }
    // Node asks for `all` when it races address families (autoSelectFamily); otherwise one address.
    if (options.all) return (callback as any)(null, list);
    callback(null, list[0].address, list[0].family);
  });
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
