// Names that resolve to the address they spell, for the address-safety tests (the DNS rebinding a
// hostile app or receiver would set up): `a-b-c-d.v4.rebind.test` answers a.b.c.d and
// `0-0-0-0-0-ffff-7f00-1.v6.rebind.test` answers ::ffff:7f00:1. Every other name goes to the real
// resolver. A test file installs it with vi.mock (the factories are hoisted, so they import this
// module themselves):
//
//   vi.mock('node:dns', async (original) => (await import('./helpers/rebind-dns.js')).rebindDns(await original()));
//   vi.mock('node:dns/promises', async (original) => (await import('./helpers/rebind-dns.js')).rebindDnsPromises(await original()));
import type * as Dns from 'node:dns';
import type * as DnsPromises from 'node:dns/promises';

function answer(host: string): { address: string; family: number } | null {
  const m = /^([0-9a-f-]+)\.v([46])\.rebind\.test\.?$/i.exec(host);
  return m ? { address: m[2] === '4' ? m[1].replace(/-/g, '.') : m[1].replace(/-/g, ':'), family: Number(m[2]) } : null;
}

/** `node:dns` with the rebind names answered (callback and promise lookups). */
export function rebindDns(actual: typeof Dns) {
  const lookup = (host: string, options: any, callback: any) => {
    const a = answer(host);
    if (!a) return actual.lookup(host, options, callback);
    process.nextTick(() => (options?.all ? callback(null, [a]) : callback(null, a.address, a.family)));
  };
  const promises = {
    ...actual.promises,
    lookup: async (host: string, options: any) => {
      const a = answer(host);
      if (!a) return actual.promises.lookup(host, options);
      return options?.all ? [a] : a;
    },
  };
  return { ...actual, default: { ...actual, lookup, promises }, lookup, promises };
}

/** `node:dns/promises` with the same lookup (taken from the mocked `node:dns`). */
export async function rebindDnsPromises(actual: typeof DnsPromises) {
  const dns = await import('node:dns');
  return { ...actual, default: { ...actual, lookup: dns.promises.lookup }, lookup: dns.promises.lookup };
}
