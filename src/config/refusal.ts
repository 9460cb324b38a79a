// One line per configuration problem: the variable, its value as it may be shown, and what is
// allowed. Secrets never appear: SVC_SECRET-like values show only their length, and a URL's
// password (in the user part or a query parameter) is masked.
import { present, VARIABLES, type Env, type VariableName } from './variables.js';
import { codePoints } from '../text.js';

export function refusal(env: Env, name: VariableName, reason: string): string {
  const value = present(env[name]);
  if (value === undefined) return `${name} is not set: ${reason}`;
  // Shown as it was checked: a verbatim value's length counts its spaces.
  return `${name}=${shown(name, VARIABLES[name].verbatim ? env[name]! : value)}: ${reason}`;
}

function shown(name: VariableName, value: string): string {
  const exposure = VARIABLES[name].exposure;
  if (exposure === 'secret') return `(hidden, ${codePoints(value)} characters)`;
  return JSON.stringify(exposure === 'url' ? maskUrl(value) : value);
}

/**
 * Masks `scheme://user:PASSWORD@host` even when the rest does not parse as a URL (that is when it
 * gets shown), taking the last `@` as the end of the user part as URL parsers do, and the values of
 * query parameters such as `password=` or `sslpassword=`.
 */
export function maskUrl(value: string): string {
  let masked = value;
  const scheme = masked.indexOf('://');
  const start = scheme >= 0 ? scheme + 3 : 0;
  const at = masked.lastIndexOf('@');
  if (at >= start) {
    const userinfo = masked.slice(start, at);
    const colon = userinfo.indexOf(':');
    // Without a colon the user part may still be a bare password or token: hide it all.
    const kept = colon >= 0 ? `${userinfo.slice(0, colon)}:****` : '****';
    masked = masked.slice(0, start) + kept + masked.slice(at);
  }
  return masked.replace(/([?&][^=&#]*(?:pass|secret|token|auth|key)[^=&#]*=)[^&#]*/gi, '$1****');
}
