-- Functions at checkout (C11.3, C11.4).
-- What the last runs of a checkout's payment-method, validation and discount functions gave
-- (`{ paymentMethods, validationErrors, discountOutputs }`): a GET of the checkout shows it (C11.4).
-- Null: no function has run (the store's payment methods, no errors, no automatic discounts).
ALTER TABLE checkouts ADD COLUMN function_results jsonb;
-- An order's automatic discounts (C11.3), after its discount code: `[{ title, value, value_type,
-- amount_minor }]`, each a `discount_applications` entry with type `automatic`.
ALTER TABLE orders ADD COLUMN automatic_discounts jsonb NOT NULL DEFAULT '[]';
