// The demo store's own data (C1.5): products with and without variants, customers, orders in
// several states, a discount, a page, a menu, shipping zones and the store's address. Written as plain rows in one
// transaction; each area's later issues extend it as their routes land.
import type { Tx } from '../db/db.js';
import { uuidv7 } from '../ids.js';
import { insertDemoOrderData } from '../orders/demo.js';

const DAY = 86_400_000;

export async function insertDemoStoreData(tx: Tx, storeId: string, now: Date): Promise<void> {
  const at = (daysAgo: number) => new Date(now.getTime() - daysAgo * DAY);

  const tee = uuidv7(), tote = uuidv7(), mug = uuidv7();
  const products: [string, string, string, string, string, string, number, number | null, number, Date][] = [
    [tee, 'Classic Tee', 'classic-tee', '<p>Soft organic cotton tee.</p>', 'Apparel', 'active', 2500, 3000, 60, at(20)],
    [tote, 'Canvas Tote', 'canvas-tote', '<p>Sturdy everyday tote.</p>', 'Accessories', 'active', 1800, null, 35, at(15)],
    [mug, 'Ceramic Mug', 'ceramic-mug', '<p>Stoneware mug, 350 ml.</p>', 'Home', 'draft', 1200, null, 0, at(3)],
  ];
  for (const [id, title, handle, body, category, status, price, compareAt, stock, created] of products) {
    await tx.query(
      `INSERT INTO products (id, store_id, title, handle, body_html, category, vendor, product_type, status, tags,
         price_minor, compare_at_price_minor, inventory_quantity, created_at, updated_at)
       VALUES ($1,$2,$3,$4,$5,$6,'Demo Store',$6,$7,$8,$9,$10,$11,$12,$12)`,
      [id, storeId, title, handle, body, category, status, JSON.stringify([category.toLowerCase(), 'demo']), price, compareAt, stock, created],
    );
    await tx.query('INSERT INTO product_images (product_id, src, position) VALUES ($1, $2, 1)', [id, `https://cdn.example.com/demo/${handle}.jpg`]);
  }
  const variants: [string, string, number][] = [['S', 'TEE-S', 20], ['M', 'TEE-M', 25], ['L', 'TEE-L', 15]];
  const variantIds: string[] = [];
  for (const [i, [size, sku, stock]] of variants.entries()) {
    const id = uuidv7();
    variantIds.push(id);
    await tx.query(
      `INSERT INTO variants (id, product_id, store_id, name, value, price_minor, discount_price_minor, stock, sku, weight, weight_unit, position, created_at, updated_at)
       VALUES ($1,$2,$3,'Size',$4,3000,2500,$5,$6,0.2,'kg',$7,$8,$8)`,
      [id, tee, storeId, size, stock, sku, i + 1, at(20)],
    );
  }

  const ada = uuidv7(), grace = uuidv7();
  const address = (name: string, city: string, province: string) => ({ address1: '1 Main Street', city, province, country: 'US', zip: '10001', phone: '+15550100', name });
  await tx.query(
    `INSERT INTO customers (id, store_id, email, name, phone, accepts_marketing, note, address, created_at, updated_at)
     VALUES ($1,$2,'ada@example.com','Ada Lovelace','+15550101',true,'VIP',$3,$4,$4), ($5,$2,'grace@example.com','Grace Hopper','+15550102',false,null,$6,$7,$7)`,
    [ada, storeId, JSON.stringify(address('Ada Lovelace', 'New York', 'NY')), at(30), grace, JSON.stringify(address('Grace Hopper', 'Arlington', 'VA')), at(12)],
  );

  // [customer, email, status, financial, fulfillment, payment, lines [product, variant, title, qty, price], days ago]
  const orders: [string, string, string, string, string, string, [string, string | null, string, number, number][], number][] = [
    [ada, 'ada@example.com', 'shipped', 'paid', 'fulfilled', 'card', [[tee, variantIds[1], 'Classic Tee', 2, 2500]], 9],
    [grace, 'grace@example.com', 'pending', 'pending', 'unfulfilled', 'cod', [[tote, null, 'Canvas Tote', 1, 1800]], 2],
    [ada, 'ada@example.com', 'canceled', 'refunded', 'unfulfilled', 'card', [[tote, null, 'Canvas Tote', 1, 1800], [tee, variantIds[0], 'Classic Tee', 1, 2500]], 5],
  ];
  for (const [n, [customer, email, status, financial, fulfillment, payment, lines, daysAgo]] of orders.entries()) {
    const id = uuidv7(at(daysAgo).getTime());
    const subtotal = lines.reduce((sum, l) => sum + l[3] * l[4], 0);
    const shipping = 500;
    const total = subtotal + shipping;
    const cancelled = status === 'canceled';
    await tx.query(
      `INSERT INTO orders (id, store_id, order_number, customer_id, email, phone, status, financial_status, fulfillment_status,
         cancelled_at, cancel_reason, subtotal_minor, shipping_minor, total_minor, refunded_minor, payment_method,
         shipping_address, billing_address, shipping_line, confirmation_number, processed_at, shipped_date, created_at, updated_at)
       VALUES ($1,$2,$3,$4,$5,'+15550101',$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$16,$17,$18,$19,$20,$19,$19)`,
      [
        id, storeId, 1001 + n, customer, email, status, financial, fulfillment, cancelled ? at(daysAgo - 1) : null, cancelled ? 'customer' : null,
        subtotal, shipping, total, cancelled ? total : 0, payment,
        JSON.stringify({ first_name: email.startsWith('ada') ? 'Ada' : 'Grace', last_name: email.startsWith('ada') ? 'Lovelace' : 'Hopper', address1: '1 Main Street', city: 'New York', province: 'NY', country: 'US', zip: '10001' }),
        JSON.stringify({ title: 'Standard', code: 'standard', source: null, price: '5.00' }),
        `DEMO${1001 + n}`, at(daysAgo), status === 'shipped' ? at(daysAgo - 1) : null,
      ],
    );
    for (const [position, [product, variant, title, qty, price]] of lines.entries()) {
      await tx.query(
        `INSERT INTO order_line_items (id, order_id, product_id, variant_id, title, quantity, price_minor, stock_deducted, position)
         VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)`,
        [uuidv7(), id, product, variant, title, qty, price, !cancelled, position + 1],
      );
    }
  }
  await tx.query('UPDATE stores SET next_order_number = 1004 WHERE id = $1', [storeId]);

  await tx.query(
    `INSERT INTO discounts (id, store_id, code, type, status, discount_percentage, min_order_total, total_coupons, used_count, uses_per_customer, start_date, end_date, created_at, updated_at)
     VALUES ($1,$2,'WELCOME10','Percentage','Active',10,20,100,1,1,$3,null,$3,$3)`,
    [uuidv7(), storeId, at(30)],
  );
  const pageId = uuidv7();
  await tx.query(
    `INSERT INTO pages (id, store_id, title, handle, content, seo_title, created_at, updated_at)
     VALUES ($1,$2,'About us','about-us','<p>We make simple, durable goods.</p>','About Demo Store',$3,$3)`,
    [pageId, storeId, at(30)],
  );
  const menuId = uuidv7();
  await tx.query(
    `INSERT INTO menus (id, store_id, name, handle, menu_type, created_at, updated_at) VALUES ($1,$2,'Main menu','main-menu','header',$3,$3)`,
    [menuId, storeId, at(30)],
  );
  for (const [i, [name, type, url]] of [['Shop', 'category', '/collections/all'], ['About us', 'page', '/pages/about-us']].entries()) {
    await tx.query(
      `INSERT INTO menus (id, store_id, parent_id, name, handle, menu_item_type, url, sort_order, created_at, updated_at)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$9)`,
      [uuidv7(), storeId, menuId, name, name.toLowerCase().replace(/\s+/g, '-'), type, url, i, at(30)],
    );
  }
  // Zones for a few countries, one of each kind (C15.2), so that a demo checkout has rates to choose.
  const zones: [string, string[], string, number, string, string | null, string | null, string | null, string | null][] = [
    ['Domestic', ['US'], 'Flat rate within the United States', 500, 'Simple', null, null, null, null],
    ['Domestic heavy', ['US'], 'Parcels of 2 kg and more', 1200, 'Weight', '2', null, null, null],
    ['Free shipping over 100', ['US', 'CA'], 'Orders of 100.00 and more', 0, 'Price', null, null, '100', null],
    ['Canada', ['CA'], 'Tracked, 5 to 8 business days', 1500, 'Simple', null, null, null, null],
    ['Europe and UK', ['GB', 'FR', 'DE', 'IE', 'NL'], 'Tracked, 6 to 10 business days', 2000, 'Simple', null, null, null, null],
  ];
  for (const [name, countries, description, price, type, minWeight, maxWeight, minPrice, maxPrice] of zones) {
    await tx.query(
      `INSERT INTO shipping_zones (id, store_id, name, countries, description, price_minor, type, min_weight, max_weight, min_price, max_price, created_at, updated_at)
       VALUES ($1,$2,$3,$4::jsonb,$5,$6,$7,$8,$9,$10,$11,$12,$12)`,
      [uuidv7(), storeId, name, JSON.stringify(countries), description, price, type, minWeight, maxWeight, minPrice, maxPrice, at(30)],
    );
  }
  // The store's address (C15.4): the origin of shipping apps' rate requests.
  await tx.query(
    `INSERT INTO store_addresses (store_id, address1, address2, city, province, country, zip, phone, updated_at)
     VALUES ($1,'500 Market Street','Suite 200','San Francisco','California','US','94105','+1 415 555 0100',$2)`,
    [storeId, at(30)],
  );
  await insertDemoCatalogData(tx, storeId, now);
  await insertDemoOrderData(tx, storeId, now);
}

/**
 * The catalog's part of the demo (issue 3): a manual collection and metafields on the shop, a
 * product, a variant and the page; `vendor`/`product_type` follow the category rule of the catalog
 * (both are the category, docs/decisions.md).
 */
async function insertDemoCatalogData(tx: Tx, storeId: string, now: Date): Promise<void> {
  const created = new Date(now.getTime() - 10 * DAY);
  await tx.query(`UPDATE products SET vendor = COALESCE(category, ''), product_type = COALESCE(category, '') WHERE store_id = $1`, [storeId]);
  const { rows: products } = await tx.query<{ id: string; handle: string }>(
    `SELECT id, handle FROM products WHERE store_id = $1 AND handle IN ('classic-tee', 'canvas-tote')`, [storeId]);
  const byHandle = new Map(products.map((p) => [p.handle, p.id]));
  const tee = byHandle.get('classic-tee')!, tote = byHandle.get('canvas-tote')!;
  const collection = uuidv7(created.getTime());
  await tx.query(
    `INSERT INTO collections (id, store_id, title, handle, body_html, image_src, published_at, created_at, updated_at)
     VALUES ($1,$2,'Summer Picks','summer-picks','<p>Light layers and carry-alls for warm days.</p>','https://cdn.example.com/demo/summer-picks.jpg',$3,$3,$3)`,
    [collection, storeId, created],
  );
  await tx.query(
    `INSERT INTO collection_products (collection_id, product_id, position, created_at) VALUES ($1,$2,1,$4), ($1,$3,2,$4)`,
    [collection, tee, tote, created],
  );
  const { rows: [variant] } = await tx.query<{ id: string }>('SELECT id FROM variants WHERE product_id = $1 ORDER BY position LIMIT 1', [tee]);
  const { rows: [page] } = await tx.query<{ id: string }>(`SELECT id FROM pages WHERE store_id = $1 AND handle = 'about-us'`, [storeId]);
  const metafields: [string, string, string, string, string, string][] = [
    ['shop', storeId, 'store', 'opening_hours', 'json', '{"mon-fri":"9:00-18:00","sat":"10:00-14:00"}'],
    ['product', tee, 'custom', 'material', 'single_line_text_field', 'Organic cotton'],
    ['product', tee, 'care', 'wash_temperature', 'number_integer', '30'],
    ['variant', variant.id, 'custom', 'chest_cm', 'number_decimal', '96.5'],
    ['collection', collection, 'custom', 'featured', 'boolean', 'true'],
    ['page', page.id, 'seo', 'hidden', 'boolean', 'false'],
  ];
  for (const [ownerType, ownerId, namespace, key, type, value] of metafields) {
    await tx.query(
      `INSERT INTO metafields (id, store_id, owner_type, owner_id, namespace, key, type, value, created_at, updated_at)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$9)`,
      [uuidv7(), storeId, ownerType, ownerId, namespace, key, type, value, created],
    );
  }
}
