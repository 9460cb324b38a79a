// Uploaded images (C7.3): kept under `{SVC_DATA_DIR}/uploads` and served at `{base_url}/uploads/...`.
// A file is streamed to disk (never held whole in memory), checked by its size and its bytes (not
// its name or declared type), then moved into place under a name the service makes.
import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, mkdir, realpath, rename, stat, unlink } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { fileTypeFromFile } from 'file-type';
import { Type } from 'typebox';
import type { Config } from '../config.js';
import type { Deps } from '../deps.js';
import { badRequest, notFound } from '../http/errors.js';
import { typed } from '../http/typed.js';
import { uuidv7 } from '../ids.js';

/** app-api.md Limits (images) and C7.3: 20 MB, read as 20 MiB. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

/** Image types by detected MIME type -> the extension files are stored (and served) under. */
const IMAGE_EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/apng': 'png',
  'image/gif': 'gif',
  'image/webp': 'webp',
};
const CONTENT_TYPES: Record<string, string> = { '.jpg': 'image/jpeg', '.png': 'image/png', '.gif': 'image/gif', '.webp': 'image/webp' };

export const uploadsRoot = (config: Config) => resolve(config.dataDir, 'uploads');

export interface StagedFile {
  path: string;
  size: number;
  truncated: boolean;
}

/** Streams `file` to a temporary file under the uploads dir (a dot-dir, never served). */
export async function stageUpload(config: Config, file: Readable & { truncated?: boolean }): Promise<StagedFile> {
  const dir = join(uploadsRoot(config), '.tmp');
  await mkdir(dir, { recursive: true });
  const path = join(dir, uuidv7());
  try {
    await pipeline(file, createWriteStream(path, { mode: 0o640 }));
  } catch (err) {
    await discard(path);
    // A failed disk operation (it names its syscall) is ours, a 500; anything else is the upload
    // ending early, a malformed request.
    throw err && typeof err === 'object' && 'syscall' in err ? err : badRequest('Malformed multipart body');
  }
  return { path, size: (await stat(path)).size, truncated: Boolean(file.truncated) };
}

/**
 * Checks a staged image (size, then type by its bytes) and moves it to `uploads/<subdir>/<name>.<ext>`.
 * Returns its public URL. The staged file is gone afterwards either way.
 */
export async function keepImage(config: Config, staged: StagedFile, field: string, subdir: string[]): Promise<{ url: string; path: string }> {
  try {
    if (staged.truncated || staged.size > MAX_IMAGE_BYTES) throw badRequest(`${field} must be at most 20 MB`);
    const type = staged.size > 0 ? await fileTypeFromFile(staged.path) : undefined;
    const ext = type ? IMAGE_EXTENSIONS[type.mime] : undefined;
    if (!ext) throw badRequest(`${field} must be a jpg, jpeg, png, gif or webp image`);
    const dir = join(uploadsRoot(config), ...subdir);
    await mkdir(dir, { recursive: true });
    const name = `${uuidv7()}.${ext}`;
    const path = join(dir, name);
    await rename(staged.path, path);
    return { url: `${config.baseUrl}/uploads/${[...subdir, name].map(encodeURIComponent).join('/')}`, path };
  } finally {
    await discard(staged.path);
  }
}

export async function discard(path: string): Promise<void> {
  await unlink(path).catch(() => {});
}

/**
 * `GET /uploads/*`: files under the uploads dir only. No segment may be empty or start with a dot
 * (no `..`, no staged files), the resolved real path must stay under the root (no symlink out), and
 * only the image types the service stores are served, with their own content type and `nosniff`.
 */
export async function uploadRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);
  const root = uploadsRoot(deps.config);
  app.get('/uploads/*', {
    schema: {
      hide: true,
      params: Type.Object({ '*': Type.String({ description: 'the path under the uploads dir' }) }),
      // A file stream is sent as it is, never through a serialiser.
      response: { 200: Type.Unsafe<unknown>({ description: 'the image bytes, with their own content type' }) },
    },
  }, async (request, reply) => {
    const rel = request.params['*'] ?? '';
    const segments = rel.split('/');
    if (!rel || rel.includes('\0') || rel.includes('\\') || segments.some((s) => s === '' || s.startsWith('.'))) throw notFound();
    const type = CONTENT_TYPES[extname(rel).toLowerCase()];
    if (!type) throw notFound();
    let real: string;
    try {
      real = await realpath(join(root, ...segments));
      const realRoot = await realpath(root);
      if (!real.startsWith(realRoot + sep)) throw notFound();
    } catch {
      throw notFound();
    }
    const info = await lstat(real).catch(() => null);
    if (!info?.isFile()) throw notFound();
    reply
      .header('content-type', type)
      .header('content-length', info.size)
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'")
      .header('cache-control', 'public, max-age=31536000, immutable');
    return reply.send(createReadStream(real));
  });
}
