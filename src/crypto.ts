// Secrets at rest and comparisons. Tokens and codes are stored as SHA-256 hashes (they are long
// random values, so a fast hash is enough); app client secrets must be readable again to sign
// webhooks and session tokens, so they are encrypted with a key derived from SVC_SECRET.
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { Lru } from './functions/runtime/lru.js';

/** Sealed secrets kept opened: every app of a busy process, signing each webhook and rate request. */
const OPENED_KEPT = 1_000;

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function hmacSha256Hex(key: string, message: string): string {
  return createHmac('sha256', key).update(message).digest('hex');
}

/** Constant-time string comparison that also guards unequal lengths. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

export class SecretBox {
  private readonly key: Buffer;
  /**
   * Opened secrets by their sealed text: opening is an AES-GCM decryption per signed request (a
   * twentieth of a shipping rate quote's CPU). The process holds the key that opens them anyway, so
   * keeping a bounded number opened in its memory exposes nothing it could not read already.
   */
  private readonly opened = new Lru<string, string>(OPENED_KEPT);

  constructor(svcSecret: string) {
    this.key = Buffer.from(hkdfSync('sha256', svcSecret, 'svc-app-platform', 'app-client-secret-encryption', 32));
  }

  /** `v1.<iv>.<tag>.<ciphertext>`, all base64url. */
  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  open(sealed: string): string {
    let plain = this.opened.get(sealed);
    if (plain === undefined) {
      plain = this.decrypt(sealed);
      this.opened.set(sealed, plain);
    }
    return plain;
  }

  private decrypt(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1') throw new Error('unknown secret encoding');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}
