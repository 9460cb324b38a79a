// Files that several processes may create at the same moment on their first start (the development
// secret, the embedded database's lock): exactly one of them creates the file, and no process ever
// reads it half written (docs/decisions.md, "Processes").
import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

/** Error codes of a file system without hard links (some network and FAT mounts). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/**
 * Creates `file` holding `content` unless it exists; true when this call created it. The content is
 * written to a file of this call's own and linked into place: link(2) fails when the name exists, so
 * of several processes creating the file at once exactly one wins, and the file appears complete or
 * not at all. Without hard links, an exclusive create (readers then wait out the moment it is empty:
 * readCreatedFile).
 */
export function createFileExclusively(file: string, content: string, mode = 0o644): boolean {
  const staged = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(staged, content, { mode, flag: 'wx' });
    linkSync(staged, file);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (code === 'EEXIST') return false;
    if (NO_HARD_LINKS.has(code)) return createWithoutLink(file, content, mode);
    throw err;
  } finally {
    rmSync(staged, { force: true });
  }
}

function createWithoutLink(file: string, content: string, mode: number): boolean {
  try {
    writeFileSync(file, content, { mode, flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** How long a reader waits for the content of a file it found empty (being created without links). */
const EMPTY_FILE_WAIT_MS = 1000;
const EMPTY_FILE_POLL_MS = 20;

/**
 * The content of a file createFileExclusively made (trimmed). Empty only when it stayed empty for
 * EMPTY_FILE_WAIT_MS: its creator died between creating and writing it. Synchronous, as the
 * configuration is read before anything else starts.
 */
export function readCreatedFile(file: string): string {
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; ; waited += EMPTY_FILE_POLL_MS) {
    const content = readFileSync(file, 'utf8').trim();
    if (content || waited >= EMPTY_FILE_WAIT_MS) return content;
    Atomics.wait(sleeper, 0, 0, EMPTY_FILE_POLL_MS);
  }
}
