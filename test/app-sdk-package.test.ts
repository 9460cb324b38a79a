// The SDK as an app developer gets it (issue 14, "Done means"): `npm pack` of packages/app-sdk gives
// a tarball that installs into an empty project, type-checks there under strict settings (with the
// library's own declarations checked too), runs, and whose `svc-app` bin works through npm's
// symlink. The tarball must carry the service's function runtime (C11) compiled, not a copy.
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './helpers/process.js';
import { tempDir } from './helpers/temp-dirs.js';

const run = promisify(execFile);
const SDK = join(ROOT, 'packages/app-sdk');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

let consumer: string;
let tarball: string;
let packed: string[];

beforeAll(async () => {
  const out = tempDir('svc-sdk-pack-');
  // `npm pack` runs the package's `prepack` (the build) first, as `npm publish` would.
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', out], { cwd: SDK, maxBuffer: 16 << 20 });
  const [info] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = join(out, info.filename);
  packed = info.files.map((f) => f.path);

  consumer = tempDir('svc-sdk-consumer-');
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  // From npm's cache when it holds the packages (the repository's own `npm ci` put them there).
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball, '@types/node@20'], { cwd: consumer, maxBuffer: 16 << 20 });
}, 180_000);

describe('npm pack of @svc/app-sdk', () => {
  it('ships compiled code and declarations, the function runtime among them, and no sources or tests', () => {
    expect(packed).toContain('package.json');
    expect(packed).toContain('README.md');
    expect(packed).toContain('dist/packages/app-sdk/src/index.js');
    expect(packed).toContain('dist/packages/app-sdk/src/index.d.ts');
    expect(packed).toContain('dist/packages/app-sdk/src/cli.js');
    expect(packed).toContain('dist/src/functions/runtime/evaluate.js');
    expect(packed.filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts'))).toEqual([]);
    // The runtime's worker pool is the service's business, not the SDK's.
    expect(packed.some((p) => p.includes('runtime/pool'))).toBe(false);
  });

  it('installs into an empty project and type-checks there, declarations included', async () => {
    writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] },
      include: ['app.ts'],
    }));
    writeFileSync(join(consumer, 'app.ts'), `
import { verifyMessage, verifyRateRequest, rateReply, verifyHandoff, TokenKeeper, MemoryTokenStore, evaluateOnce, createAppClient, parseWebhook, rateResponse, type RateOffer, type RunResult } from '@svc/app-sdk';
const offer: RateOffer = { service_name: 'Ground', service_code: 'ground', total_price: 500, currency: 'EUR' };
const body: string = rateReply([offer]);
const verdict = verifyMessage({ rawBody: body, headers: new Headers(), secret: 's' });
const reason: string = verdict.ok ? verdict.topic : verdict.reason;
const rate = verifyRateRequest({ rawBody: body, headers: {}, secret: 's' });
if (rate.ok) { const n: number = rate.payload.rate.items.length; void n; }
const handoff = verifyHandoff(new URLSearchParams('shop=x'), 's');
const keeper = new TokenKeeper({ baseUrl: 'http://localhost', clientId: 'c', clientSecret: 's' }, new MemoryTokenStore());
const result: RunResult = evaluateOnce({ target: 'cart.validations.generate.run', expression: '{"operations": []}', input: {}, configuration: {} });
// The REST client, typed from the generated OpenAPI types; webhooks narrowed by topic.
const client = createAppClient({ baseUrl: 'http://localhost', tokenProvider: () => keeper.accessToken('demo') });
async function titles(): Promise<string[]> {
  const { data } = await client.GET('/api/v1/products/{id}.json', { params: { path: { id: '1' } } });
  const out: string[] = data ? [data.product.title] : [];
  for await (const order of client.paginate('/api/v1/orders.json', { params: { query: { limit: 50 } } })) out.push(order.name);
  return out;
}
const message = parseWebhook({ rawBody: body, headers: {}, secret: 's' });
const source: string | null | undefined = message.ok && message.topic === 'orders/create' ? message.payload.shipping_lines[0]?.source : undefined;
export { reason, handoff, keeper, result, titles, source, rateResponse };
`);
    const check = await run(process.execPath, [TSC, '-p', consumer], { cwd: consumer }).then(() => ({ code: 0, out: '' }), (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }));
    expect(check.out).toBe('');
    expect(check.code).toBe(0);
  }, 60_000);

  it('runs: the installed runtime gives the platform result, and the svc-app bin works through its symlink', async () => {
    writeFileSync(join(consumer, 'run.mjs'), `
import { evaluateOnce, signBody, verifyBodySignature } from '@svc/app-sdk';
const result = evaluateOnce({ target: 'cart.validations.generate.run', expression: 'input.total > 10 ? {"operations": [{"validationAdd": {"errors": [{"message": "too much", "target": "cart"}]}}]} : {"operations": []}', input: { total: 12 }, configuration: {} });
console.log(JSON.stringify({ result, signed: verifyBodySignature('{}', signBody('{}', 'k'), 'k') }));
`);
    const { stdout } = await run(process.execPath, ['run.mjs'], { cwd: consumer });
    const printed = JSON.parse(stdout) as { result: RunResult; signed: boolean };
    expect(printed.signed).toBe(true);
    expect(printed.result.status).toBe('success');
    expect(printed.result.output).toEqual({ operations: [{ validationAdd: { errors: [{ message: 'too much', target: 'cart' }] } }] });

    mkdirSync(join(consumer, 'fn'), { recursive: true });
    writeFileSync(join(consumer, 'fn/rule.cel'), '{"operations": []}');
    writeFileSync(join(consumer, 'fn/input.json'), '{}');
    expect(readdirSync(join(consumer, 'node_modules/.bin'))).toContain('svc-app');
    const bin = await run(join(consumer, 'node_modules/.bin/svc-app'), ['function', 'run', '--target', 'cart.validations.generate.run', '--expression', 'fn/rule.cel', '--input', 'fn/input.json'], { cwd: consumer });
    expect(JSON.parse(bin.stdout)).toMatchObject({ status: 'success', output: { operations: [] } });
  }, 60_000);
});

type RunResult = { status: string; output: unknown };
