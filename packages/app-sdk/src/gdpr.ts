// GDPR (app-api.md GDPR routes and webhooks, C9.2): after a `customers/data_request`,
// `customers/redact` or `shop/redact` webhook the app acknowledges the request (within 30 days) and
// completes it (within 90 days). The webhook's HTTP answer does not count: only these calls do, and
// they are needed even when the webhook never arrived. The request id is the webhook's
// `X-SVC-Gdpr-Request-Id` (`message.gdprRequestId`), also `data_request.id` in a data request.
import { ApiError, createAppClient, errorMessage, type AppClient } from './client.js';
import type { paths } from './generated/openapi.js';

/** The request as the platform answers it (C9.2: `data`, the app's own acknowledgment state only). */
export type GdprRequest = paths['/apps/gdpr/complete/{requestId}']['post']['responses'][200]['content']['application/json']['data'];

type Target = AppClient | { baseUrl: string; accessToken: string };

const clientOf = (target: Target): AppClient => ('POST' in target ? target : createAppClient(target));

function fail(action: string, response: Response, error: any): never {
  throw new ApiError(response.status, errorMessage(error, `${action} answered ${response.status}`), error);
}

/** `POST /apps/gdpr/acknowledge/{requestId}` with the store's access token: the request is seen. */
export async function acknowledgeGdprRequest(target: Target, requestId: string): Promise<GdprRequest> {
  const { data, error, response } = await clientOf(target).POST('/apps/gdpr/acknowledge/{requestId}', { params: { path: { requestId } } });
  if (!data) fail('acknowledge', response, error);
  return data.data;
}

/**
 * `POST /apps/gdpr/complete/{requestId}`: the request is done; for a data request, `dataExportUrl`
 * (an absolute http(s) URL) is where the merchant finds the export.
 */
export async function completeGdprRequest(target: Target, requestId: string, options: { dataExportUrl?: string | null } = {}): Promise<GdprRequest> {
  const body = options.dataExportUrl === undefined ? {} : { dataExportUrl: options.dataExportUrl };
  const { data, error, response } = await clientOf(target).POST('/apps/gdpr/complete/{requestId}', { params: { path: { requestId } }, body });
  if (!data) fail('complete', response, error);
  return data.data;
}
