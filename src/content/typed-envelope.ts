// `envelopeList()` of src/http/shapes.ts with the static type its response schema
// (`envelopeListOf` of src/http/schemas.ts) expects: `state: 'success'`, `message: null`, `count`
// and `pagination` filled, which the general `Envelope<T>` type (shared with the error envelope)
// does not say. The body is shapes.ts's own, unchanged. It belongs beside `envelope()` in
// shapes.ts; it is here, for the store-data areas, only because src/http is not theirs (the same
// helper as src/webhooks/typed-envelope.ts on another branch: one of them should go to shapes.ts).
import { envelopeList, type Envelope, type Pagination } from '../http/shapes.js';

/** A paged list's success envelope (C5.3), typed for `envelopeListOf(schema)`. */
export const successList = <T>(data: T, page: { page: number; limit: number }, resultCount: number, total: number) =>
  envelopeList(data, page, resultCount, total) as Envelope<T> & { state: 'success'; message: null; data: T; count: number; pagination: Pagination };
