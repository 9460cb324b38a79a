// Pages (app-api.md Page; `POST /api/v1/pages.json` and the merchant `POST /pages`, C7.1).
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/db.js';
import { uuidv7 } from '../ids.js';
import { nullable, Timestamp } from '../http/schemas.js';
import { bodyObject, optionalBoolean, optionalHttpUrl, optionalText, requiredText, type Body } from './fields.js';
import type { PageBody } from './content.schemas.js';

export interface PageRow {
  id: string;
  store_id: string;
  title: string;
  handle: string | null;
  template_suffix: string | null;
  link: string | null;
  content: string;
  seo_title: string | null;
  seo_desc: string | null;
  seo_image: string | null;
  show_title: boolean;
  created_at: Date;
  updated_at: Date;
}

/** `id` repeats `pageId` as a string: the page has one identity (docs/decisions.md). */
export function pageView(p: PageRow) {
  return {
    pageId: p.id,
    id: p.id,
    title: p.title,
    handle: p.handle,
    templateSuffix: p.template_suffix,
    link: p.link,
    content: p.content,
    seoTitle: p.seo_title,
    seoDesc: p.seo_desc,
    seoImage: p.seo_image,
    showtitle: p.show_title,
    storeId: p.store_id,
    createdAt: p.created_at.toISOString(),
    updatedAt: p.updated_at.toISOString(),
  };
}
export type PageView = ReturnType<typeof pageView>;

/** The page (app-api.md Page), as `pageView` writes it. */
export const PageSchema = Type.Object({
  pageId: Type.String({ description: 'the page id (UUID)' }),
  id: Type.String({ description: 'the same id again' }),
  title: Type.String(),
  handle: nullable(Type.String(), { description: 'null when none was sent' }),
  templateSuffix: nullable(Type.String()),
  link: nullable(Type.String()),
  content: Type.String({ description: 'HTML' }),
  seoTitle: nullable(Type.String()),
  seoDesc: nullable(Type.String()),
  seoImage: nullable(Type.String()),
  showtitle: Type.Boolean(),
  storeId: Type.String(),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});

interface PageInput {
  title: string;
  handle: string | null;
  templateSuffix: string | null;
  link: string | null;
  content: string;
  seoTitle: string | null;
  seoDesc: string | null;
  seoImage: string | null;
  showtitle: boolean;
}

const CONTENT_MAX = 512 * 1024;

/**
 * The create fields of app-api.md's pages row. `title` must be a non-blank string (400). `handle`
 * is stored as sent (trimmed) and stays null when omitted or empty: no slug is made from the title.
 * `link` (an external link) and `seoImage` (a social-share image URL, app-api.md Page) are absolute
 * http(s) URLs, null when omitted, null or blank.
 */
export function readPageInput(raw: PageBody): PageInput {
  const body: Body = bodyObject(raw);
  const handle = optionalText(body, 'handle');
  return {
    title: requiredText(body, 'title'),
    handle: handle === undefined || handle === '' ? null : handle,
    templateSuffix: optionalText(body, 'templateSuffix') ?? null,
    link: optionalHttpUrl(body, 'link') ?? null,
    content: optionalText(body, 'content', { raw: true, max: CONTENT_MAX }) ?? '',
    seoTitle: optionalText(body, 'seoTitle') ?? null,
    seoDesc: optionalText(body, 'seoDesc', { max: 1000 }) ?? null,
    seoImage: optionalHttpUrl(body, 'seoImage') ?? null,
    showtitle: optionalBoolean(body, 'showtitle') ?? true,
  };
}

export async function insertPage(q: Queryable, storeId: string, input: PageInput, now: Date): Promise<PageRow> {
  const { rows } = await q.query<PageRow>(
    `INSERT INTO pages (id, store_id, title, handle, template_suffix, link, content, seo_title, seo_desc, seo_image, show_title, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12) RETURNING *`,
    [uuidv7(now.getTime()), storeId, input.title, input.handle, input.templateSuffix, input.link, input.content,
      input.seoTitle, input.seoDesc, input.seoImage, input.showtitle, now],
  );
  return rows[0];
}

export async function createPage(deps: Deps, storeId: string, body: PageBody): Promise<PageView> {
  const input = readPageInput(body);
  return pageView(await insertPage(deps.db, storeId, input, deps.clock.now()));
}
