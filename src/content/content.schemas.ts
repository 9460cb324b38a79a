// The content routes' request bodies (app-api.md Page and Menu; C7.1, C14.5), validated by the
// route before the readers (pages.ts, menus.ts) trim, default and check what a schema cannot.
// Lengths the readers count after trimming stay with them; `content` is kept as sent, so its limit
// is said here too.
import { Type, type Static } from 'typebox';
import { nullable } from '../http/schemas.js';
import { MAX_MENU_DEPTH, MAX_MENU_ITEMS, MAX_STORE_MENU_ITEMS, MAX_STORE_MENUS } from './menus.js';

/** A field documented only, for areas whose bodies are not described yet (orders, fulfillments). */
export const field = (description: string) => Type.Optional(Type.Unknown({ description }));

const text = (description: string) => Type.Optional(nullable(Type.String(), { description }));
const storeId = Type.Optional(Type.String({ description: 'the store, for the platform operator only (merchant admin)' }));

export const pageBodySchema = Type.Object({
  title: nullable(Type.String(), { description: 'required, not blank; trimmed, at most 255 characters' }),
  handle: text('trimmed, at most 255 characters; null when omitted or blank (no slug is made from the title)'),
  content: Type.Optional(nullable(Type.String({ maxLength: 512 * 1024 }), { description: 'HTML, kept as sent; default ""' })),
  templateSuffix: text('trimmed, at most 255 characters'),
  link: text('external link: an absolute http or https URL, trimmed, at most 2048 characters; null or "" for none'),
  showtitle: Type.Optional(Type.Boolean({ description: 'default true' })),
  seoTitle: text('trimmed, at most 255 characters'),
  seoDesc: text('trimmed, at most 1000 characters'),
  seoImage: text('social-share image URL: an absolute http or https URL, trimmed, at most 2048 characters; null or "" for none'),
  storeId,
});
export type PageBody = Static<typeof pageBodySchema>;

export const menuBodySchema = Type.Object({
  name: nullable(Type.String(), { description: 'required, not blank; trimmed, at most 255 characters' }),
  handle: text('default: a slug of name; trimmed, at most 255 characters'),
  menuType: text('e.g. header or footer; trimmed, at most 255 characters'),
  menuItemType: text('trimmed, at most 255 characters'),
  url: text('trimmed, at most 2048 characters'),
  // The items are checked by the reader, which names a problem by its place (`child[0].name`).
  child: Type.Optional(nullable(Type.Array(Type.Unknown()), {
    description: `the items, each an object { name (required), handle?, menuType?, menuItemType?, url?, child? } with the menu's rules, nested at most ${MAX_MENU_DEPTH} levels deep, at most ${MAX_MENU_ITEMS} items in all; null: none. A store has at most ${MAX_STORE_MENUS} menus and ${MAX_STORE_MENU_ITEMS} items across them (400 past either)`,
    'x-error': 'must be an array of menu items',
  })),
  storeId,
});
export type MenuBody = Static<typeof menuBodySchema>;
