-- Shipping rates (C15): the store's address, the origin of shipping apps' rate requests (C15.4),
-- and the cache of those requests' answers (C15.3).

-- One row per store once the merchant has saved an address; a store without a row has none (every
-- field null). A table of its own rather than columns on `stores`: only rate requests read it.
CREATE TABLE store_addresses (
  store_id uuid PRIMARY KEY REFERENCES stores (id),
  address1 text,
  address2 text,
  city text,
  province text,
  -- ISO 3166-1 alpha-2, upper case (checked by the service against the maintained list)
  country text CHECK (country ~ '^[A-Z]{2}$'),
  zip text,
  phone text,
  updated_at timestamptz NOT NULL
);

-- C15.3: a rate request with the same body bytes to the same app is answered from here for
-- 15 minutes after a 2xx and 30 seconds after a failure, on the service clock. In the database
-- rather than in memory, so every api process of a deployment shares it. `rates` holds the
-- app's rates as validated (C15.3), app-neutral, in hundredths; empty after a failure.
CREATE TABLE shipping_rate_cache (
  app_id uuid NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  -- hex SHA-256 of the exact request body bytes
  body_sha256 text NOT NULL,
  -- the URL asked: an app that moves its ratesUrl is asked again, not answered from the old one
  rates_url text NOT NULL,
  ok boolean NOT NULL,
  rates jsonb NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (app_id, body_sha256)
);
CREATE INDEX shipping_rate_cache_expiry_idx ON shipping_rate_cache (expires_at);
