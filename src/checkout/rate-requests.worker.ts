// The thread that sends shipping apps' rate requests and reads their replies (rate-requests.ts says
// why it is a thread). It signs each body with the app's secret (app-api.md Signature), sends it
// through the same outbound client as webhooks (address rules of C8.9 at request time, the
// deadline, no redirects, a bounded reply) and validates a 2xx reply as the checkout keeps it
// (rate-reply.ts), so what goes back to the main thread is only each request's outcome and rates.
// It never throws for an app's sake: every request gets an outcome.
import { parentPort, workerData } from 'node:worker_threads';
import { WebhookHttp } from '../webhooks/http-client.js';
import { signedHeaders } from '../webhooks/signature.js';
import { parseRateReply } from './rate-reply.js';
import { isSuccessStatus, RATE_CONNECTIONS_PER_ORIGIN, RATE_REQUEST_TIMEOUT_MS, RATE_TOPIC, REPLY_MAX_BYTES, type JobMessage, type OutcomeMessage, type RateThreadOptions } from './rate-requests.js';

const options = workerData as RateThreadOptions;
const http = new WebhookHttp(options.allowPrivate, RATE_REQUEST_TIMEOUT_MS, RATE_CONNECTIONS_PER_ORIGIN);
const port = parentPort!;

/** Outcomes of one turn go back together. */
let outcomes: OutcomeMessage = [];
function answer(outcome: OutcomeMessage[number]): void {
  if (outcomes.length === 0) {
    setImmediate(() => {
      const batch = outcomes;
      outcomes = [];
      port.postMessage(batch);
    });
  }
  outcomes.push(outcome);
}

async function run(job: JobMessage[number]): Promise<void> {
  try {
    const headers = signedHeaders(job.secret, job.body, RATE_TOPIC, job.shopDomain);
    const result = await http.send(job.url, headers, job.body, { timeoutMs: job.timeoutMs, keepBytes: REPLY_MAX_BYTES });
    answer({ id: job.id, status: result.status, error: result.error, durationMs: result.durationMs, rates: isSuccessStatus(result.status) ? parseRateReply(result.responseBody ?? '', job.currency) : null });
  } catch (err) {
    // Not an app's doing (the client never throws for one): the request gave nothing, the thread goes on.
    answer({ id: job.id, status: null, error: `network_error: ${(err as Error)?.message ?? 'unknown'}`, durationMs: 0, rates: null });
  }
}

port.on('message', (jobs: JobMessage) => {
  for (const job of jobs) void run(job);
});
