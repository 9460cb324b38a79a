// A preload for the shipping rate requests' thread (src/checkout/rate-requests.ts) that stands for a
// thread that stopped answering: its first message keeps the thread busy for good (a handler
// registered before the thread's own, which then never runs). What the main side must survive.
import { parentPort } from 'node:worker_threads';

parentPort!.on('message', () => {
  for (;;) {
    // busy for ever: only terminate() ends this thread
  }
});
