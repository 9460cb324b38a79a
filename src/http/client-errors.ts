// Requests Node's HTTP parser refuses before any Fastify request exists: a request line and headers
// over the header limit (16 KiB: a very long URL), broken chunked framing, Content-Length together
// with Transfer-Encoding, two Content-Lengths, a method or a path that is not HTTP, a request that
// took too long to arrive. Fastify's default answer is a body of its own (`{ error, message,
// statusCode }`), in neither documented shape; C5.1 wants every error of an endpoint in that
// endpoint's shape, and C5.5 the version header on every /api/v1/ answer.
//
// Here the request line is read from the bytes the parser refused (when they begin with one) to
// find the endpoint it names (src/http/route-shapes.ts), and the answer is written in its shape.
// No hook, gate or handler runs: the request is not authenticated, so, like a 401, it carries no
// rate-limit headers and is not counted. Then the connection is closed, as Node and Fastify do: the
// parser cannot tell where the next request would start.
import { METHODS, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { API_VERSION } from '../api-version.js';
import { REQUEST_ID_HEADER } from './request-id.js';
import { envelopeError, errorsBody, type ErrorShape } from './shapes.js';
import { pathOfTarget } from './edge.js';

/** What the parser's error means for the client. */
function problemOf(code: string | undefined): { status: number; message: string } {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, message: 'The request took too long to arrive' };
  if (code === 'HPE_HEADER_OVERFLOW') return { status: 431, message: 'The request line and headers are too large' };
  return { status: 400, message: 'Malformed HTTP request' };
}

const KNOWN_METHODS = new Set(METHODS);
/** `METHOD target HTTP/x.y`: the target in origin form (`/path?query`) or absolute form (`http://host/path`). */
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}) (?:[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/ ]*)?(\/[^ \r\n]*)/;

/** The method and path of the request line at the start of `packet`, if it starts with one. */
export function requestLineOf(packet: Buffer | undefined): { method: string; path: string } | null {
  if (!packet) return null;
  // latin1: one character per byte, whatever the client sent; only ASCII matters to the patterns.
  const match = REQUEST_LINE.exec(packet.subarray(0, 4096).toString('latin1'));
  if (!match) return null;
  return { method: match[1], path: match[2].split('?')[0] };
}

/**
 * Fastify's `clientErrorHandler` (bound to the root instance): the refusal in the shape of the
 * endpoint the request line names (`shapeOf(method, path)`), the envelope when none can be read.
 * `observe` records the answer in the metrics (method reduced to a known one, or `(invalid)`).
 */
export function clientErrorHandler(
  shapeOf: (method: string, path: string) => ErrorShape,
  observe: (method: string, status: number) => void,
) {
  return function handleClientError(this: { log: FastifyBaseLogger }, err: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
    // A reset connection has nobody to answer (https://nodejs.org/api/http.html#event-clienterror).
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const { status, message } = problemOf(err.code);
    const line = requestLineOf(Buffer.isBuffer(err.rawPacket) ? err.rawPacket : undefined);
    const path = line?.path ?? '';
    const method = line && KNOWN_METHODS.has(line.method) ? line.method : '(invalid)';
    const shape = line ? shapeOf(method, path) : 'envelope';
    const body = JSON.stringify(shape === 'errors' ? errorsBody(message) : envelopeError(status, message));
    const id = randomUUID();
    const headers = [
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
      `${REQUEST_ID_HEADER}: ${id}`,
      ...(path.startsWith('/api/v1/') ? [`X-SVC-Api-Version: ${API_VERSION}`] : []),
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Connection: close',
    ];
    // Debug, not error: a client's malformed request is not the service's fault (nor its log's).
    this.log.debug({ reqId: id, code: err.code, status }, 'refused a malformed HTTP request');
    // As Node does: never into a response already under way (its bytes would corrupt it).
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) {
      socket.write(`${headers.join('\r\n')}\r\n\r\n${body}`);
      observe(method, status);
    }
    socket.destroy(err);
  };
}

/**
 * An `Expect` header other than `100-continue`: Node answers 417 itself, with an empty body and
 * before any hook, unless the server has a `checkExpectation` listener; this is that listener, in
 * the shape of the endpoint the URL names (C5.1), with the version header under /api/v1 (C5.5).
 */
export function expectationFailedHandler(shapeOf: (method: string, path: string) => ErrorShape, observe: (method: string, status: number) => void) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const path = pathOfTarget(req.url ?? '').split('?')[0]; // absolute form too (RFC 9112 3.2.2)
    const message = 'The Expect header can only ask for 100-continue';
    const body = JSON.stringify(shapeOf(req.method ?? 'GET', path) === 'errors' ? errorsBody(message) : envelopeError(417, message));
    observe(req.method ?? '(invalid)', 417);
    res.writeHead(417, {
      [REQUEST_ID_HEADER]: randomUUID(),
      ...(path.startsWith('/api/v1/') ? { 'X-SVC-Api-Version': API_VERSION } : {}),
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      Connection: 'close',
    });
    res.end(body);
  };
}
