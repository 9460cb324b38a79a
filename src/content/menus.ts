// Menus (app-api.md Menu; `GET /api/v1/menus.json`, merchant `POST /menus`, C14.5). A menu and its
// items are rows of one table: a menu is a row without a parent, an item points at its parent, and
// `child` nests them in the response.
import { Type, type TSchema } from 'typebox';
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { uuidv7 } from '../ids.js';
import { slugify } from '../slug.js';
import { AppError, badRequest, notFound } from '../http/errors.js';
import { isUuid } from '../ids.js';
import { releaseUploads } from '../catalog/upload-references.js';
import { nullable, Timestamp } from '../http/schemas.js';
import { bodyObject, fieldError, optionalLink, optionalText, requiredText, type Body } from './fields.js';
import type { MenuBody } from './content.schemas.js';

/** Nesting below the menu itself (menu > item > sub-item > ...). */
export const MAX_MENU_DEPTH = 5;
export const MAX_MENU_ITEMS = 500;
/**
 * A store's menus and their items in all: `GET /api/v1/menus.json` answers every one of them in one
 * response (app-api.md: no paging), so the store's total is what bounds that response. 100 menus is
 * the service's bound for a store's collections (webhooks per store, manifest webhooks); 5,000 items
 * leaves room for ten menus of the largest size.
 */
export const MAX_STORE_MENUS = 100;
export const MAX_STORE_MENU_ITEMS = 5000;

export interface MenuRow {
  id: string;
  store_id: string;
  parent_id: string | null;
  name: string;
  handle: string;
  menu_type: string | null;
  menu_item_type: string | null;
  url: string | null;
  sort_order: number;
  created_at: Date;
  updated_at: Date;
}

export interface MenuView {
  menuId: string;
  name: string;
  handle: string;
  menuType: string | null;
  menuItemType: string | null;
  url: string | null;
  child: MenuView[];
  parentId: string | null;
  order: number;
  createdAt: string;
  updatedAt: string;
}

function menuView(row: MenuRow, children: Map<string | null, MenuRow[]>): MenuView {
  return {
    menuId: row.id,
    name: row.name,
    handle: row.handle,
    menuType: row.menu_type,
    menuItemType: row.menu_item_type,
    url: row.url,
    child: (children.get(row.id) ?? []).map((c) => menuView(c, children)),
    parentId: row.parent_id,
    order: row.sort_order,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/**
 * The menu or item at `depth` (0: the menu) with its items nested in `child`, written out level by
 * level rather than as a recursive `$ref`: items nest at most MAX_MENU_DEPTH levels below the
 * menu, and a plain nested schema is what the compiled serialiser and the reference handle best.
 */
function menuSchema(depth: number): TSchema {
  const child = depth < MAX_MENU_DEPTH
    ? Type.Array(menuSchema(depth + 1), { description: 'the items below, in order' })
    : Type.Array(Type.Unknown(), { description: `always empty: items nest at most ${MAX_MENU_DEPTH} levels deep` });
  return Type.Object({
    menuId: Type.String({ description: depth ? 'the item id (UUID)' : 'the menu id (UUID)' }),
    name: Type.String(),
    handle: Type.String(),
    menuType: nullable(Type.String()),
    menuItemType: nullable(Type.String()),
    url: nullable(Type.String()),
    child,
    parentId: nullable(Type.String(), { description: depth ? 'the menu or item above' : 'null for a menu' }),
    order: Type.Integer({ description: 'the position among its siblings' }),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  });
}

/** The menu (app-api.md Menu; C14.5), as `menuView` writes it, items nested. */
export const MenuSchema = Type.Unsafe<MenuView>(menuSchema(0));

/** Rows (already in display order) as trees: the menus without a parent, items nested in `child`. */
export function menuTrees(rows: MenuRow[]): MenuView[] {
  const children = new Map<string | null, MenuRow[]>();
  for (const row of rows) {
    const list = children.get(row.parent_id);
    if (list) list.push(row);
    else children.set(row.parent_id, [row]);
  }
  return (children.get(null) ?? []).map((root) => menuView(root, children));
}

/** Every menu of the store with all its items: one query, nested in memory (no N+1). */
export async function listMenus(q: Queryable, storeId: string): Promise<MenuView[]> {
  const { rows } = await q.query<MenuRow>(
    'SELECT * FROM menus WHERE store_id = $1 ORDER BY sort_order, created_at, id',
    [storeId],
  );
  return menuTrees(rows);
}

interface MenuNode {
  name: string;
  handle: string;
  menuType: string | null;
  menuItemType: string | null;
  url: string | null;
  child: MenuNode[];
}

/** A field error of a nested item, renamed to its path (`child[0].name can't be blank`). */
function within(path: string, err: unknown): unknown {
  if (!path || !(err instanceof AppError) || !err.fields) return err;
  const fields = Object.fromEntries(Object.entries(err.fields).map(([k, v]) => [`${path}.${k}`, v]));
  return new AppError(err.kind, `${path}.${err.message}`, fields);
}

interface MenuInput extends MenuNode {
  /** Items below the menu, at every level. */
  itemCount: number;
}

function readNode(body: Body, path: string, depth: number, count: { n: number }): MenuNode {
  let node: Omit<MenuNode, 'child'>;
  try {
    const name = requiredText(body, 'name');
    node = {
      name,
      // A name with no Latin letter or digit ("菜单") has no slug: the handle is then `menu`, as a
      // product's is `product` (products.service.ts), never empty.
      handle: optionalText(body, 'handle') || slugify(name) || 'menu',
      menuType: optionalText(body, 'menuType') ?? null,
      menuItemType: optionalText(body, 'menuItemType') ?? null,
      url: optionalLink(body, 'url') ?? null,
    };
  } catch (err) {
    throw within(path, err);
  }
  const prefix = path ? `${path}.` : '';
  const rawChild = body.child ?? [];
  if (!Array.isArray(rawChild)) throw fieldError(`${prefix}child`, 'must be an array of menu items');
  if (rawChild.length && depth >= MAX_MENU_DEPTH) throw badRequest(`menu items nest at most ${MAX_MENU_DEPTH} levels deep`);
  const child = rawChild.map((item, i) => {
    const itemPath = `${prefix}child[${i}]`;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw fieldError(itemPath, 'must be an object');
    if (++count.n > MAX_MENU_ITEMS) throw badRequest(`a menu has at most ${MAX_MENU_ITEMS} items`);
    return readNode(item as Body, itemPath, depth + 1, count);
  });
  return { ...node, child };
}

/** C14.5: `{ name, handle, menuType, child: [{ name, menuItemType, url, child }] }`. */
export function readMenuInput(raw: MenuBody): MenuInput {
  const count = { n: 0 };
  return { ...readNode(bodyObject(raw), '', 0, count), itemCount: count.n };
}

/** The menu and all its items in the caller's transaction; `order` is the position among siblings. */
async function insertTree(tx: Queryable, storeId: string, node: MenuNode, parentId: string | null, order: number, now: Date, out: MenuRow[]) {
  const { rows } = await tx.query<MenuRow>(
    `INSERT INTO menus (id, store_id, parent_id, name, handle, menu_type, menu_item_type, url, sort_order, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING *`,
    [uuidv7(now.getTime()), storeId, parentId, node.name, node.handle, node.menuType, node.menuItemType, node.url, order, now],
  );
  out.push(rows[0]);
  for (const [i, c] of node.child.entries()) await insertTree(tx, storeId, c, rows[0].id, i, now, out);
}

export async function createMenu(deps: Deps, storeId: string, body: MenuBody): Promise<MenuView> {
  const input = readMenuInput(body);
  const now = deps.clock.now();
  const rows: MenuRow[] = [];
  // One menu is many rows: all of them or none.
  await deps.db.transaction(async (tx) => {
    // A new menu goes after the store's existing ones. Menus made at once take turns (held to the
    // commit), else each read the same last position and they shared it; the store's bounds are
    // counted in the same turn, so menus made at once at a bound cannot all pass it.
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`menus:${storeId}`]);
    const { rows: [store] } = await tx.query<{ next: number; menus: number; items: number }>(
      `SELECT COALESCE(max(sort_order) FILTER (WHERE parent_id IS NULL) + 1, 0)::int AS next,
              (count(*) FILTER (WHERE parent_id IS NULL))::int AS menus,
              (count(*) FILTER (WHERE parent_id IS NOT NULL))::int AS items
         FROM menus WHERE store_id = $1`,
      [storeId],
    );
    if (store.menus >= MAX_STORE_MENUS) throw badRequest(`a store has at most ${MAX_STORE_MENUS} menus`);
    if (store.items + input.itemCount > MAX_STORE_MENU_ITEMS) {
      throw badRequest(`a store has at most ${MAX_STORE_MENU_ITEMS} menu items in all; it has ${store.items} and this menu has ${input.itemCount}`);
    }
    await insertTree(tx, storeId, input, null, store.next, now, rows);
  });
  return menuTrees(rows)[0];
}

/**
 * Deletes a menu with all its items (merchant `DELETE /menus/{id}`; the spec names only the create,
 * docs/decisions.md Content): without it a store at its bounds could never make another menu. Only
 * a menu, not an item: items are written and replaced with their menu. `mayTouch` refuses another
 * store's menu (403, as the merchant admin's other routes). Uploads only the menu's links used go
 * with it (the catalog's reference rule). Answers the menu as it was.
 */
export async function deleteMenu(deps: Deps, id: string, mayTouch: (storeId: string) => void): Promise<MenuView> {
  return deps.db.transaction(async (tx) => {
    const { rows: [menu] } = isUuid(id)
      ? await tx.query<MenuRow>('SELECT * FROM menus WHERE id = $1 AND parent_id IS NULL', [id])
      : { rows: [] as MenuRow[] };
    if (!menu) throw notFound('Menu not found');
    mayTouch(menu.store_id);
    // In the store's turn for menus, as creating one: a create counting the store's bounds sees the
    // menu whole or not at all.
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`menus:${menu.store_id}`]);
    const { rows } = await tx.query<MenuRow>(
      `WITH RECURSIVE tree AS (
         SELECT * FROM menus WHERE id = $1
         UNION ALL SELECT m.* FROM menus m JOIN tree t ON m.parent_id = t.id
       )
       SELECT * FROM tree ORDER BY sort_order, created_at, id`,
      [menu.id],
    );
    const { rowCount } = await tx.query('DELETE FROM menus WHERE id = $1', [menu.id]); // items cascade
    if (!rowCount) throw notFound('Menu not found'); // deleted meanwhile
    const urls = rows.map((r) => r.url).filter((url): url is string => url !== null);
    await releaseUploads(tx, deps.config, menu.store_id, urls, deps.clock.now());
    return menuTrees(rows)[0];
  });
}
