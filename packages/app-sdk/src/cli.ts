#!/usr/bin/env node
// svc-app: the app developer's command line (issue 14, in progress).
//
//   svc-app function run --target <target> --expression <file> --input <file> [--configuration <file>]
//       Runs a function locally with the platform's own runtime: prints the result as JSON; exit
//       code 0 when the run succeeds, 1 when it fails (its errorType says why).
//   svc-app function replay --base <url> --token <developer JWT> --app <appId> --handle <handle> --run <runId> [--expression <file>]
//       Replays a recorded run on the platform (C11.7) and prints the outcome.
//   svc-app webhook verify --secret <client secret> --request <file>
//       Checks a saved request (JSON: { "headers": {...}, "body": "<the raw body>" }): exit code 0
//       and the verified message when the signature holds, 1 and the reason when it does not.
//   svc-app webhook trigger --base <url> --token <developer JWT> --app <appId> --topic <topic> --address <url>
//       Has the platform send the topic's signed sample payload to the address, once
//       (POST /apps/developer/{appId}/webhooks/test) and prints the outcome: exit code 0 when the
//       address answered 2xx, 1 when it did not or the platform refused (its error is printed).
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
  svc-app webhook trigger --base <url> --token <developer JWT> --app <appId> --topic <topic> --address <url>`;

const readJson = async (path: string) => JSON.parse(await readFile(path, 'utf8'));

function need(values: Record<string, string | undefined>, ...names: string[]): void {
  const missing = names.filter((n) => !values[n]);
  if (missing.length) throw new UsageError(`missing ${missing.map((m) => `--${m}`).join(', ')}`);
}

class UsageError extends Error {}

export async function main(argv: string[], out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<number> {
  const [area, command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: Object.fromEntries(['target', 'expression', 'input', 'configuration', 'base', 'token', 'app', 'handle', 'run', 'secret', 'request', 'topic', 'address'].map((o) => [o, { type: 'string' as const }])),
  });
  try {
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
      const res = await fetch(`${values.base!.replace(/\/+$/, '')}/apps/developer/${values.app}/functions/${values.handle}/runs/${values.run}/replay`, {
        method: 'POST',
        headers: { authorization: `Bearer ${values.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = (await res.json()) as { data?: { status?: string }; message?: string };
      out(JSON.stringify(json.data ?? json, null, 2));
      return res.status === 200 && json.data?.status === 'success' ? 0 : 1;
    }
    if (area === 'webhook' && command === 'verify') {
      need(values, 'secret', 'request');
      const saved = await readJson(values.request!);
      const headers = Object.fromEntries(Object.entries(saved.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
      const verdict = verifyMessage({ rawBody: String(saved.body ?? ''), headers, secret: values.secret! });
      out(JSON.stringify(verdict, null, 2));
      return verdict.ok ? 0 : 1;
    }
    if (area === 'webhook' && command === 'trigger') {
      need(values, 'base', 'token', 'app', 'topic', 'address');
      const res = await fetch(`${values.base!.replace(/\/+$/, '')}/apps/developer/${values.app}/webhooks/test`, {
        method: 'POST',
        headers: { authorization: `Bearer ${values.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ topic: values.topic, address: values.address }),
      });
      const json = (await res.json()) as { data?: { delivery: { deliveryId: string; webhookId: string }; outcome: { success: boolean } } };
      const data = json.data;
      // The outcome with the ids to find the delivery in the log by; a refusal as the platform sent it.
      out(JSON.stringify(data ? { deliveryId: data.delivery.deliveryId, webhookId: data.delivery.webhookId, ...data.outcome } : json, null, 2));
      return res.status === 200 && data?.outcome.success ? 0 : 1;
    }
    throw new UsageError(`unknown command: ${[area, command].filter(Boolean).join(' ') || '(none)'}`);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    out(`${err.message}\n${USAGE}`);
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
