// An installation as the merchant's installations list and uninstall show it (C4), and the
// developer's view of it (src/billing/developer-analytics.ts).
import { Type } from 'typebox';
import { Id, nullable, StringEnum, Timestamp } from '../http/schemas.js';

export const InstallationSchema = Type.Object({
  installationId: Id(),
  appId: Id(),
  storeId: Id(),
  app: Type.Optional(Type.Object({ name: Type.String(), handle: Type.String() }, { description: 'the app installed' })),
  status: StringEnum(['pending', 'active', 'pending_uninstall', 'uninstalled']),
  scopes: Type.Array(Type.String(), { description: 'the scopes granted' }),
  billingStatus: StringEnum(['none', 'trialing', 'active', 'past_due'], { description: 'none for a free app (C10)' }),
  installedVersion: Type.String(),
  autoUpdate: Type.Boolean(),
  pinnedVersion: nullable(Type.String()),
  billingStartDate: nullable(Timestamp()),
  trialEndsAt: nullable(Timestamp()),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});
