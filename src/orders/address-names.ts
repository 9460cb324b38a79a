// The names an address shows beside its codes. A buyer's checkout needs only `country_code` (C15.1)
// and often gives `province_code` alone, while the `orders/create` body carries `country` and
// `province` without the codes (app-api.md, Payload conventions): a shipping app acts on that body.
// So the country named must be the one the code says, which rates were quoted for (C15.2, C15.3):
// with a valid `country_code`, a `country` that is missing or names another country (a buyer's
// "France" beside "US") becomes the code's English short name ("DE" -> "Germany"); one that names
// the same country ("US", "United States") is kept as given. A province given by its code alone
// gets the code as its name, as no list of subdivision names is kept.
// docs/decisions.md, "Orders": an address's names follow its codes.
import { countryName, namesCountry } from '../shipping/countries.js';
import type { Address } from './order-view.js';

export function withPlaceNames(address: Partial<Address>): Partial<Address> {
  const out = { ...address };
  const code = out.country_code;
  if (code && !(out.country && namesCountry(out.country, code))) {
    const name = countryName(code);
    if (name) out.country = name;
  }
  if (!out.province && out.province_code) out.province = out.province_code;
  return out;
}
