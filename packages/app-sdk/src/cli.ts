#!/usr/bin/env node
// svc-app: the app developer's command line (issue 14). Results go to stdout; a usage error (exit 2)
// goes to stderr with the usage, so `svc-app ... > result.json` never writes the usage into the file.
//
//   svc-app function run --target <target> --expression <file> --input <file> [--configuration <file>]
//       Runs a function locally with the platform's own runtime: prints the result as JSON; exit
//       code 0 when the run succeeds, 1 when it fails (its errorType says why).
//   svc-app function replay --base <url> --token <developer JWT> --app <appId> --handle <handle> --run <runId> [--expression <file>]
//       Replays a recorded run on the platform (C11.7) and prints the outcome.
//   svc-app webhook verify --secret <client secret> --request <file>
//       Checks a saved request (JSON: { "headers": {...}, "body": "<the raw body>" }, or a delivery
//       of the developer API's log, GET /apps/developer/{appId}/webhook-deliveries/{deliveryId},
//       saved whole or as its data.delivery): exit code 0 and the verified message when the
//       signature holds, 1 and the reason when it does not.
//   svc-app --help (or -h, or help): the usage on stdout, exit code 0.
//   svc-app webhook trigger --base <url> --token <developer JWT> --app <appId> --topic <topic> --address <url>
//       Has the platform send the topic's signed sample payload to the address, once
//       (POST /apps/developer/{appId}/webhooks/test) and prints the outcome: exit code 0 when the
//       address answered 2xx, 1 when it did not or the platform refused (its error is printed).
//   svc-app rates test --base <url> --token <developer JWT> --app <appId> [--address <url>] [--currency <code>]
//       Has the platform send a sample shipping rate request, as a checkout would, to the app's
//       ratesUrl or the address (POST /apps/developer/{appId}/shipping-rates/test) and prints the
//       rates a checkout would offer and why each other rate (or the whole reply) was dropped: exit
//       code 0 when a rate was offered, 1 when none was or the platform refused.
//   --secret and --token may instead come from the environment, SVC_CLIENT_SECRET and
//   SVC_DEVELOPER_TOKEN: an option is visible to anyone running `ps` and stays in the shell's
//   history, and the client secret must stay on the app's backend (app-api.md, Rules). An option
//   given wins over the environment.
import { realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { evaluateOnce } from './functions.js';
import { verifyMessage } from './webhooks.js';

const USAGE = `usage:
  svc-app function run --target <target> --expression <file> --input <file> [--configuration <file>]
  svc-app function replay --base <url> --token <developer JWT> --app <appId> --handle <handle> --run <runId> [--expression <file>]
  svc-app webhook verify --secret <client secret> --request <file>
  svc-app webhook trigger --base <url> --token <developer JWT> --app <appId> --topic <topic> --address <url>
  svc-app rates test --base <url> --token <developer JWT> --app <appId> [--address <url>] [--currency <code>]
      sends a sample shipping rate request as a checkout would (to the app's ratesUrl unless --address is
      given) and prints the rates a checkout would offer and why each other rate was dropped;
      exit code 1 when no rate was offered
  --secret and --token may be left out and given in the environment instead, as SVC_CLIENT_SECRET and
  SVC_DEVELOPER_TOKEN, so that neither shows in \`ps\` or the shell's history; an option given wins`;

// A file that is not JSON is named in the error: a bare JSON.parse message says neither which file nor why.
const readJson = async (path: string) => {
  const text = await readFile(path, 'utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${path} is not JSON: ${(err as Error).message}`);
  }
};

/** The environment variable each credential option may be given in instead (see `main`). */
const FROM_ENVIRONMENT: Record<string, string> = { secret: 'SVC_CLIENT_SECRET', token: 'SVC_DEVELOPER_TOKEN' };

function need(values: Record<string, string | undefined>, ...names: string[]): void {
  const missing = names.filter((n) => !values[n]);
  if (!missing.length) return;
  const elsewhere = missing.filter((n) => FROM_ENVIRONMENT[n]).map((n) => `--${n} may be given as ${FROM_ENVIRONMENT[n]} in the environment`);
  throw new UsageError(`missing ${missing.map((m) => `--${m}`).join(', ')}${elsewhere.length ? ` (${elsewhere.join('; ')})` : ''}`);
}

class UsageError extends Error {}

/** `--base` as the platform's http(s) URL without a trailing slash; anything else is a usage error. */
function platformBase(base: string): string {
  let url: URL | null = null;
  try {
    url = new URL(base);
  } catch {
    // reported below
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new UsageError(`--base must be the platform's http(s) URL, e.g. http://localhost:3000 (got ${base})`);
  return base.replace(/\/+$/, '');
}

/**
 * POSTs a JSON body to the platform with the developer JWT. Undici's bare "fetch failed" and a
 * JSON.parse error on an HTML page say neither where nor why: these errors name the address (never
 * the token) and the cause, e.g. ECONNREFUSED, or that what answered is not the platform.
 */
async function postToPlatform(url: string, token: string, body: unknown): Promise<{ res: Response; json: { data?: any; message?: string } }> {
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  } catch (err) {
    const cause = (err as { cause?: { message?: string; code?: string } }).cause;
    throw new Error(`could not reach the platform at ${url}: ${cause?.message || cause?.code || (err as Error).message}`);
  }
  const text = await res.text();
  try {
    return { res, json: JSON.parse(text) };
  } catch {
    throw new Error(`${url} answered ${res.status} with a body that is not JSON: is --base the platform's URL?`);
  }
}

/**
 * A value as one path segment: `--app ../../other` or an id with a `/`, `?` or `#` must name that
 * app, run or handle, not another route (the URL parser would resolve `..` and cut at `?`). A value
 * that is empty, `.` or `..` stays a dot segment however it is encoded (WHATWG URL): a usage error.
 */
function segment(value: string): string {
  if (value === '' || value === '.' || value === '..') throw new UsageError(`"${value}" is not an app id, function handle or run id`);
  return encodeURIComponent(value);
}

/**
 * The headers and raw body of a saved request: `{ headers, body }`, or a delivery of the developer
 * API's log (`requestHeaders`, `requestBody`), alone or in the answer's envelope. Anything else is
 * an error naming the file: checked as it was, it only said "missing signature" or "bad signature".
 */
function savedRequest(saved: any, path: string): { headers: Record<string, unknown>; body: string } {
  const delivery = saved?.data?.delivery ?? saved;
  const headers = delivery?.headers ?? delivery?.requestHeaders;
  const body = delivery?.body ?? delivery?.requestBody;
  if (!headers || typeof headers !== 'object' || Array.isArray(headers) || body === undefined) {
    throw new Error(`${path} holds no saved request: give { "headers": {...}, "body": "<the raw body>" } or a delivery from GET /apps/developer/{appId}/webhook-deliveries/{deliveryId}`);
  }
  // A delivery older than the retention period keeps its record but not its bodies (C8.10):
  // `requestBody` is null, which is no mistake of the developer's to correct.
  if (body === null) throw new Error(`${path}: the delivery's request body is no longer kept (the platform prunes delivery bodies after its retention period, C8.10): there is nothing to verify`);
  // The signature is over the bytes sent: a body saved as parsed JSON can never verify.
  if (typeof body !== 'string') throw new Error(`${path}: "body" must be the raw body as one string (the bytes the platform signed), not parsed JSON`);
  return { headers, body };
}

export async function main(
  argv: string[],
  out: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
  error: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
  env: Record<string, string | undefined> = process.env,
): Promise<number> {
  const [area, command, ...rest] = argv;
  // Asked for, the usage is the answer (stdout, exit 0), not an "unknown option" error.
  if (argv.some((a) => a === '--help' || a === '-h') || area === 'help') {
    out(USAGE);
    return 0;
  }
  try {
    // Inside the try: an unknown option or a stray argument is a usage error (exit 2, with the usage), not a crash.
    let values: Record<string, string | undefined>;
    let tokens: Array<{ kind: string; name?: string }>;
    try {
      ({ values, tokens } = parseArgs({
        args: rest,
        tokens: true,
        options: Object.fromEntries(['target', 'expression', 'input', 'configuration', 'base', 'token', 'app', 'handle', 'run', 'secret', 'request', 'topic', 'address', 'currency'].map((o) => [o, { type: 'string' as const }])),
      }) as { values: Record<string, string | undefined>; tokens: Array<{ kind: string; name?: string }> });
    } catch (err) {
      if (typeof (err as { code?: unknown }).code === 'string' && (err as { code: string }).code.startsWith('ERR_PARSE_ARGS_')) throw new UsageError((err as Error).message);
      throw err;
    }
    // An option given twice is ambiguous (which secret, which target?): parseArgs would keep the last one silently.
    const given = tokens.filter((t) => t.kind === 'option').map((t) => t.name!);
    const repeated = [...new Set(given.filter((name, i) => given.indexOf(name) !== i))];
    if (repeated.length) throw new UsageError(`${repeated.map((r) => `--${r}`).join(', ')} given more than once`);
    // Out of `ps` and the shell's history (see the top of this file); an option given wins.
    for (const [option, variable] of Object.entries(FROM_ENVIRONMENT)) values[option] ??= env[variable] || undefined;
    if (area === 'function' && command === 'run') {
      need(values, 'target', 'expression', 'input');
      const result = evaluateOnce({
        target: values.target!,
        expression: await readFile(values.expression!, 'utf8'),
        input: await readJson(values.input!),
        configuration: values.configuration ? await readJson(values.configuration) : {},
      });
      out(JSON.stringify(result, null, 2));
      return result.status === 'success' ? 0 : 1;
    }
    if (area === 'function' && command === 'replay') {
      need(values, 'base', 'token', 'app', 'handle', 'run');
      const body = values.expression ? { expression: await readFile(values.expression, 'utf8') } : {};
      const { res, json } = await postToPlatform(`${platformBase(values.base!)}/apps/developer/${segment(values.app!)}/functions/${segment(values.handle!)}/runs/${segment(values.run!)}/replay`, values.token!, body);
      out(JSON.stringify(json.data ?? json, null, 2));
      return res.status === 200 && json.data?.status === 'success' ? 0 : 1;
    }
    if (area === 'webhook' && command === 'verify') {
      need(values, 'secret', 'request');
      const saved = savedRequest(await readJson(values.request!), values.request!);
      // Names as saved (verifyMessage reads them in any case, and a repeated one as repeated).
      const headers = Object.fromEntries(Object.entries(saved.headers).map(([k, v]) => [k, Array.isArray(v) ? v.map(String) : String(v)]));
      const verdict = verifyMessage({ rawBody: saved.body, headers, secret: values.secret! });
      out(JSON.stringify(verdict, null, 2));
      return verdict.ok ? 0 : 1;
    }
    if (area === 'webhook' && command === 'trigger') {
      need(values, 'base', 'token', 'app', 'topic', 'address');
      const { res, json } = await postToPlatform(`${platformBase(values.base!)}/apps/developer/${segment(values.app!)}/webhooks/test`, values.token!, { topic: values.topic, address: values.address });
      const data = json.data as { delivery: { deliveryId: string; webhookId: string }; outcome: { success: boolean } } | undefined;
      // The outcome with the ids to find the delivery in the log by; a refusal as the platform sent it.
      out(JSON.stringify(data ? { deliveryId: data.delivery.deliveryId, webhookId: data.delivery.webhookId, ...data.outcome } : json, null, 2));
      return res.status === 200 && data?.outcome.success ? 0 : 1;
    }
    if (area === 'rates' && command === 'test') {
      need(values, 'base', 'token', 'app');
      const body = { ...(values.address ? { address: values.address } : {}), ...(values.currency ? { currency: values.currency } : {}) };
      const { res, json } = await postToPlatform(`${platformBase(values.base!)}/apps/developer/${segment(values.app!)}/shipping-rates/test`, values.token!, body);
      const data = json.data as { requestBody: string; rates: unknown[] } | undefined;
      // The request sent is long and the same every time: the report is what the app's reply gave.
      const { requestBody: _sent, ...report } = data ?? { requestBody: '', rates: [] };
      out(JSON.stringify(data ? report : json, null, 2));
      return res.status === 200 && data!.rates.length > 0 ? 0 : 1;
    }
    throw new UsageError(`unknown command: ${[area, command].filter(Boolean).join(' ') || '(none)'}`);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    error(`${err.message}\n${USAGE}`);
    return 2;
  }
}

// Run when this file is the program, also through npm's `node_modules/.bin/svc-app` symlink.
const invokedDirectly = process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  main(process.argv.slice(2)).then((code) => process.exit(code), (err) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
