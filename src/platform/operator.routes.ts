// Operating and testing controls (C12; the operator surface, role SUPER_ADMIN): the test clock and
// on-demand job runs.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { TestClock } from '../clock.js';
import { badRequest, notFound } from '../http/errors.js';
import { envelope } from '../http/shapes.js';
import { envelopeOf, Timestamp } from '../http/schemas.js';
import { typed } from '../http/typed.js';
import { advanceClock, ClockOffsetError } from './clock-store.js';

const tags = ['operator'];

/**
 * Ten years per call: far beyond any test's need, and small enough that the offset stays a bigint
 * and the clock a valid date (1e308 seconds made both fail as a 500; issue 10).
 */
const MAX_ADVANCE_SECONDS = 10 * 365 * 24 * 3600;

const clockEnvelope = envelopeOf(Type.Object({ now: Timestamp('the service clock: real time plus the test offset') }));

export async function operatorRoutes(instance: FastifyInstance, { deps }: { deps: Deps }) {
  const app = typed(instance);
  const testClock = deps.clock instanceof TestClock ? deps.clock : null;
  const requireTestClock = () => {
    if (!testClock) throw notFound('The test clock is off (SVC_TEST_CLOCK=1 enables it)');
    return testClock;
  };

  app.get('/apps/admin/clock', { schema: { tags, summary: 'The service clock (C12.1); 404 while the test clock is off', response: { 200: clockEnvelope } } }, async () => {
    requireTestClock();
    return envelope({ now: deps.clock.now().toISOString() });
  });

  app.post('/apps/admin/clock/advance', {
    schema: {
      tags, summary: 'Move the test clock forward (C12.1)',
      body: Type.Object({ seconds: Type.Number({ description: `from 0 to ${MAX_ADVANCE_SECONDS} (ten years) per call` }) }),
      response: { 200: clockEnvelope },
    },
  }, async (request) => {
    const clock = requireTestClock();
    const { seconds } = request.body;
    if (!Number.isFinite(seconds) || seconds < 0 || seconds > MAX_ADVANCE_SECONDS) {
      throw badRequest(`seconds must be a number of seconds from 0 to ${MAX_ADVANCE_SECONDS}`);
    }
    try {
      await advanceClock(deps.db, clock, seconds);
    } catch (err) {
      // The offset as a whole is bounded too (clock-store.ts), however many calls carried it there.
      if (err instanceof ClockOffsetError) throw badRequest(`seconds: ${err.message}`);
      throw err;
    }
    return envelope({ now: clock.now().toISOString() });
  });

  app.post('/apps/admin/jobs/:job/run', {
    schema: {
      tags, summary: 'Run a background job now (C12.2)',
      params: Type.Object({ job: Type.String({ description: 'the job name; an unknown one is not found' }) }),
      response: { 200: envelopeOf(Type.Object({ job: Type.String(), processed: Type.Integer({ description: 'the items the run handled' }) })) },
    },
  }, async (request) => {
    const { job } = request.params;
    if (!deps.jobs.has(job)) throw notFound(`Unknown job ${job}; known jobs: ${deps.jobs.names().join(', ') || 'none'}`);
    const result = await deps.jobs.run(job);
    return envelope({ job, processed: result.processed });
  });
}
