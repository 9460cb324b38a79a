// Framework-neutral receiving: the raw body and headers from a Web `Request` (fetch-style servers,
// edge runtimes) or from Node's `IncomingMessage` (node:http, Express, Fastify's `request.raw`),
// read with a size bound; verified and parsed (`parseWebhook`); and the answers: a rate reply in the
// C15.3 shape (200, JSON) or a refusal (401 for a missing or bad signature, as app-api.md Signature
// asks; 400 for a body that is not JSON, of an unknown topic or cut short by the sender; 413 for one
// too large), as a Web `Response` or written to a Node `ServerResponse`. The receive functions
// never throw for what the sender did (a body too large or cut short): the README's handlers
// have no try/catch, and a rejection escaping an `async` node:http handler ends the process.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { parseWebhook, type WebhookMessage, type WebhookRefusal } from './payloads.js';
import { rateReply, type RateOffer, type RateRequestRefusal } from './rates.js';

/**
 * The default bound on a body (8 MiB). The platform takes requests of up to 1 MiB, and a webhook
 * body is the REST resource such a request made plus what the platform adds (ids, totals, line
 * views): an order or product event can be over 1 MiB, and a receiver that answers 413 loses it
 * for good (a 4xx is not retried). Found in review with the former 1 MiB bound.
 */
export const DEFAULT_MAX_BODY_BYTES = 8 << 20;

export class BodyTooLargeError extends Error {
  readonly status = 413;
  constructor(readonly maxBytes: number) {
    super(`request body larger than ${maxBytes} bytes`);
  }
}

/**
 * The sender went away (or the connection failed) before the whole body arrived: the peer's
 * failure, so the receive functions answer it as a refusal rather than throw (an `async`
 * `node:http` handler that lets it escape takes the whole process down).
 */
export class IncompleteBodyError extends Error {
  readonly status = 400;
  constructor(cause?: unknown) {
    super('request body incomplete: the connection ended before it did', { cause });
  }
}

/**
 * Something read the body before the SDK could (a JSON body parser, `express.json()`): the raw
 * bytes the signature covers are gone, and waiting for them would wait for ever. A programming
 * error, so it is thrown, also by the receive functions.
 */
export class BodyAlreadyReadError extends Error {
  constructor() {
    super('the request body was already read (a JSON body parser?): give the SDK the untouched request, and the raw bytes to verifyMessage');
  }
}

export interface RawRequest<H> {
  rawBody: Uint8Array;
  headers: H;
}

function declaredTooLarge(contentLength: string | null | undefined, maxBytes: number): boolean {
  return contentLength != null && /^\d+$/.test(contentLength) && Number(contentLength) > maxBytes;
}

/** The raw bytes and headers of a Web `Request`; more than `maxBytes` -> `BodyTooLargeError`, cut short -> `IncompleteBodyError`. */
export async function readWebRequest(request: Request, options: { maxBytes?: number } = {}): Promise<RawRequest<Headers>> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (declaredTooLarge(request.headers.get('content-length'), maxBytes)) throw new BodyTooLargeError(maxBytes);
  if (request.bodyUsed) throw new BodyAlreadyReadError();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (err) {
        throw new IncompleteBodyError(err);
      }
      const { done, value } = chunk;
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel();
        throw new BodyTooLargeError(maxBytes);
      }
      chunks.push(value);
    }
  }
  return { rawBody: Buffer.concat(chunks), headers: request.headers };
}

/**
 * The raw bytes and headers of a Node request; more than `maxBytes` -> `BodyTooLargeError` (the
 * rest of the body is not read), cut short by the sender -> `IncompleteBodyError`. Give it the
 * request before anything else consumed its stream (else `BodyAlreadyReadError`).
 */
export function readNodeRequest(req: IncomingMessage, options: { maxBytes?: number } = {}): Promise<RawRequest<IncomingHttpHeaders>> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BODY_BYTES;
  return new Promise((resolve, reject) => {
    if (declaredTooLarge(req.headers['content-length'], maxBytes)) return reject(new BodyTooLargeError(maxBytes));
    // Its 'end' has been and gone: listening for it would never settle.
    if (req.readableEnded || req.readableDidRead) return reject(new BodyAlreadyReadError());
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        req.pause();
        reject(new BodyTooLargeError(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve({ rawBody: Buffer.concat(chunks), headers: req.headers });
    };
    // A client that disconnects mid-body: 'error' (ECONNRESET, "aborted"), or only 'close'.
    const onError = (err: Error) => {
      cleanup();
      reject(new IncompleteBodyError(err));
    };
    const onClose = () => {
      cleanup();
      reject(new IncompleteBodyError());
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

export type ReceiveRefusal = WebhookRefusal | { ok: false; reason: 'body too large' } | { ok: false; reason: 'incomplete body' };

/** Reads, verifies and parses a webhook or rate request arriving as a Web `Request`. */
export async function receiveWebRequest(request: Request, options: { secret: string; maxBytes?: number }): Promise<WebhookMessage | ReceiveRefusal> {
  try {
    return parseWebhook({ ...(await readWebRequest(request, options)), secret: options.secret });
  } catch (err) {
    if (err instanceof BodyTooLargeError) return { ok: false, reason: 'body too large' };
    if (err instanceof IncompleteBodyError) return { ok: false, reason: 'incomplete body' };
    throw err;
  }
}

/** Reads, verifies and parses a webhook or rate request arriving at a Node server. */
export async function receiveNodeRequest(req: IncomingMessage, options: { secret: string; maxBytes?: number }): Promise<WebhookMessage | ReceiveRefusal> {
  try {
    return parseWebhook({ ...(await readNodeRequest(req, options)), secret: options.secret });
  } catch (err) {
    if (err instanceof BodyTooLargeError) return { ok: false, reason: 'body too large' };
    if (err instanceof IncompleteBodyError) return { ok: false, reason: 'incomplete body' };
    throw err;
  }
}

/** The status a refusal (of the receive functions, `parseWebhook` or `verifyRateRequest`) is answered with. */
export function refusalStatus(refusal: ReceiveRefusal | RateRequestRefusal): number {
  switch (refusal.reason) {
    case 'missing signature':
    case 'bad signature':
      return 401;
    case 'body too large':
      return 413;
    default:
      return 400;
  }
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** A rate request's answer (C15.3): 200, `{ rates: [...] }`. */
export function rateResponse(rates: readonly RateOffer[]): Response {
  return new Response(rateReply(rates), { status: 200, headers: { 'content-type': JSON_TYPE } });
}

/** Writes a rate request's answer (C15.3) to a Node response. */
export function sendRates(res: ServerResponse, rates: readonly RateOffer[]): void {
  const body = rateReply(rates);
  res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** A refusal as a Web `Response` (`{ error }`). */
export function refusalResponse(refusal: ReceiveRefusal | RateRequestRefusal): Response {
  return new Response(JSON.stringify({ error: refusal.reason }), { status: refusalStatus(refusal), headers: { 'content-type': JSON_TYPE } });
}

/** Writes a refusal to a Node response (`{ error }`). */
export function sendRefusal(res: ServerResponse, refusal: ReceiveRefusal | RateRequestRefusal): void {
  const body = JSON.stringify({ error: refusal.reason });
  const status = refusalStatus(refusal);
  // A body cut short at the bound leaves unread bytes on the connection: close it.
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body), ...(status === 413 ? { connection: 'close' } : {}) });
  res.end(body);
}
