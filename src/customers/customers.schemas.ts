import { Type } from 'typebox';
import { field } from '../content/content.schemas.js';

/** Documentation only: the rules (customers.service.ts) check each field. May also come wrapped as `{ customer: {...} }`. */
export const customerBodySchema = Type.Object({
  email: field('string, required on create, unique in the store'),
  first_name: field('string'),
  last_name: field('string'),
  phone: field('string'),
  accepts_marketing: field('boolean, default false'),
  note: field('string'),
  tags: field('array of string: accepted, not stored (tags come back empty)'),
  addresses: field('array; only the first is kept, and of it only address1, city, province, country, zip, phone'),
  customer: field('the same fields wrapped, REST-style'),
});
