-- Where a customer's first name ends in the one stored `name` (src/customers/customer-fields.ts):
-- without it the name was split back at its first space, so a last name sent alone came back as the
-- first name, and setting a first name then dropped it ("Lee", then first_name "Ann": "Ann"). In
-- code points (char_length's unit); 0 means no first name. Rows written before keep NULL and the
-- old split: which of their words were the first name was never recorded, so it is not guessed.
ALTER TABLE customers ADD COLUMN first_name_length integer;
ALTER TABLE customers ADD CONSTRAINT customers_first_name_length_check CHECK (first_name_length >= 0);
