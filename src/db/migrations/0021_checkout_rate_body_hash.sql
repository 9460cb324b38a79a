-- The SHA-256 of the shipping rate request body a quote of the checkout would send as of its last
-- change (C15.3; src/checkout/rate-request.ts `rateBodySha256Of`), null when a quote would ask no
-- app. The quote query reads that body's answers from the shared rate cache together with the
-- checkout, so a quote of an unchanged checkout does not query the cache on its own. A hint, never
-- trusted: a quote uses those answers only when the body it sends hashes the same (the store's
-- address or the catalog may have changed since). Checkouts from before stay null: their quotes
-- query the cache as before.
ALTER TABLE checkouts ADD COLUMN rate_body_sha256 text;
