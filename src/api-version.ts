// The App API's version (C5.5): sent on every /api/v1 response, stamped on webhook subscriptions
// and on every delivery. Its own module, so the webhook worker needs nothing of the HTTP gate.
export const API_VERSION = '2026-06';
