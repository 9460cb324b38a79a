// test/helpers/rebind-dns.ts for a worker thread, where vi.mock does not reach: imported first by
// the thread (the shipping rate requests' thread takes it as `preload`, src/checkout/rate-requests.ts),
// it answers the `.rebind.test` names in that thread's `node:dns` itself, named imports included.
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import { rebindDns } from './rebind-dns.js';

const answered = rebindDns({ ...dns, promises: { ...dns.promises } } as typeof dns);
dns.lookup = answered.lookup as typeof dns.lookup;
dns.promises.lookup = answered.promises.lookup as typeof dns.promises.lookup;
syncBuiltinESMExports();

