-- C15.3's rate cache is a cache: what it holds can always be asked again. Unlogged, its writes
-- skip the WAL, so a quote that asked shipping apps no longer waits for a WAL flush (fsync) to
-- record their answers, and the database does a fraction of the work per answer. After a crash
-- PostgreSQL empties it (the apps are asked again); standbys do not have it (api processes read it
-- on the primary, where they write it).
ALTER TABLE shipping_rate_cache SET UNLOGGED;

-- The key leads with the body's hash: a quote reads the answers of its apps to one body, and a
-- named statement's generic plan cannot tell how many apps the list holds (it guessed 100), so
-- with (app_id, body_sha256) it chose to walk the expiry index over every live row (4 ms at 50,000
-- rows, growing with the cache). By the hash first, the lookup is a few index entries whatever the
-- plan. Nothing reads the cache by app alone (an app's deletion, which cascades, is rare).
ALTER TABLE shipping_rate_cache DROP CONSTRAINT shipping_rate_cache_pkey, ADD PRIMARY KEY (body_sha256, app_id);
