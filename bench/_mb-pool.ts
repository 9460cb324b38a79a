import { createFunctionRunner } from '../src/functions/runtime/pool.js';
import { evaluateOnce } from '../src/functions/runtime/evaluate.js';
const target = 'cart.delivery-options.transform.run';
const FNS = [
  { configuration: { maxPrice: '14.00' }, expression: '{"operations": input.deliveryOptions.filter(o, double(o.price) > double(configuration.maxPrice)).map(o, {"hide": {"handle": o.handle}})}' },
  { configuration: {}, expression: '{"operations": input.deliveryOptions.filter(o, o.code == "Standard").map(o, {"rename": {"handle": o.handle, "title": o.title + " (tracked)"}})}' },
  { configuration: {}, expression: '{"operations": input.deliveryOptions.filter(o, o.code == "Standard").map(o, {"move": {"handle": o.handle, "index": 0}})}' },
];
const line = (i: number) => ({ id: `line-${i}`, product_id: `p${i}`, variant_id: null, title: `Product ${i}`, quantity: 2, price: '10.00', line_price: '20.00', sku: `SKU${i}`, requires_shipping: true, grams: 500 });
const input = { checkout: { token: 'x'.repeat(32), email: 'a@b.c', currency: 'USD', line_items: [1, 2, 3, 4, 5].map(line), subtotal_price: '100.00', total_price: '105.00', shipping_address: { country_code: 'US', city: 'X', zip: '12345' } }, shop: { id: 's', domain: 'shop', currency: 'USD' },
  deliveryOptions: [{ handle: 'zone-1', title: 'Standard', price: '5.00', code: 'Standard', source: null }, { handle: 'zone-2', title: 'Express', price: '15.00', code: 'Express', source: null }] };
const reqs = () => { const inputJson = JSON.stringify(input); return FNS.map((f) => ({ target, expression: f.expression, input, inputJson, configuration: f.configuration })); };
const N = Number(process.env.N ?? 20000), C = Number(process.env.C ?? 32);
const runner = createFunctionRunner();
await runner.ready();
async function measure(label: string, fn: () => Promise<unknown>) {
  let i = 0; const t0 = performance.now(); const c0 = process.cpuUsage();
  await Promise.all(Array.from({ length: C }, async () => { while (i++ < N) await fn(); }));
  const ms = performance.now() - t0; const c = process.cpuUsage(c0);
  console.log(`${label}: ${(N / ms * 1000).toFixed(0)} tasks/s, CPU ${((c.user + c.system) / N).toFixed(0)} us/task`);
}
for (let k = 0; k < 2; k++) {
  await measure('pool runAll x3', () => runner.runAll(reqs()));
  await measure('in-thread x3', async () => { for (const r of reqs()) evaluateOnce(r); });
}
await runner.close();
