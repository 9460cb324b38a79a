// Request bodies for OpenAPI. Types are checked in the rules (pages.ts, menus.ts), which give
// field-named messages; the schemas only document the fields and require a JSON object.
import { Type } from 'typebox';

export const field = (description: string) => Type.Optional(Type.Unknown({ description }));

export const pageBodySchema = Type.Object({
  title: field('string, required, not blank'),
  handle: field('string; null when omitted (no slug is made from the title)'),
  content: field('string, HTML'),
  templateSuffix: field('string or null'),
  link: field('string or null: external link'),
  showtitle: field('boolean, default true'),
  seoTitle: field('string or null'),
  seoDesc: field('string or null'),
  seoImage: field('string or null: social-share image URL'),
});

export const menuBodySchema = Type.Object({
  name: field('string, required'),
  handle: field('string; default: a slug of name'),
  menuType: field('string, e.g. header or footer'),
  child: field('array of items { name, menuItemType, url, handle?, child }, nested'),
});
