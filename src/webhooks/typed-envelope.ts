// `envelope()` and `envelopeList()` of src/http/shapes.ts with the static types their response
// schemas (`envelopeOf`, `envelopeListOf` of src/http/schemas.ts) expect: a success is
// `state: 'success'` with `message: null` and `data` present, which the general `Envelope<T>` type
// (shared with the error envelope) does not say. The bodies are shapes.ts's own, unchanged.
// Used by the webhooks, mail, GDPR and payments routes; a candidate for src/http/shapes.ts.
import { envelope, envelopeList, type Envelope, type Pagination } from '../http/shapes.js';

type Success<T> = Envelope<T> & { state: 'success'; message: null; data: T };

/** A success envelope (C5.1), typed for `envelopeOf(schema)`. */
export const success = <T>(data: T, status = 200) => envelope(data, status) as Success<T> & { count: null; pagination: null };

/** A paged list's success envelope (C5.3), typed for `envelopeListOf(schema)`. */
export const successList = <T>(data: T, page: { page: number; limit: number }, resultCount: number, total: number) =>
  envelopeList(data, page, resultCount, total) as Success<T> & { count: number; pagination: Pagination };
