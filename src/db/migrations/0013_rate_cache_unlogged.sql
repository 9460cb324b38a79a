-- C15.3's rate cache is a cache: what it holds can always be asked again. Unlogged, its writes
-- skip the WAL, so a quote that asked shipping apps no longer waits for a WAL flush (fsync) to
-- record their answers, and the database does a fraction of the work per answer. After a crash
-- PostgreSQL empties it (the apps are asked again); standbys do not have it (api processes read it
-- on the primary, where they write it).
ALTER TABLE shipping_rate_cache SET UNLOGGED;
