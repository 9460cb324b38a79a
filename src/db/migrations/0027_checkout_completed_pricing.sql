-- What a completed checkout was priced at when its completion took the order (C15.1): its lines as
-- priced from the catalog then, and the discount code as it applied then. A later read of the
-- checkout is priced from these rather than from the catalog and the code of the moment (a price
-- moved, a product archived, a code used up by this very order), so it keeps showing what its order
-- charged. Catalog and code facts only, nothing of the buyer's: the erasure of a redacted customer
-- (C9) has nothing to take from it. Checkouts completed before stay null and are read as before.
ALTER TABLE checkouts ADD COLUMN completed_pricing jsonb;
