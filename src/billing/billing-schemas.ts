// What the developer's money routes and the operator's payout routes show (app-api.md "Developer
// resources", C10, C14.12). Amounts are decimal strings in USD.
import { Type } from 'typebox';
import { Id, Money, nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { PAYOUT_STATUSES } from '../payouts/payouts.js';
import { PAYOUT_SCHEDULES } from './schedule.js';
import { InstallationSchema } from '../oauth/installation-schema.js';

export const PayoutSchema = Type.Object({
  payoutId: Id(),
  developerId: Id(),
  amount: Money(),
  currency: Type.String(),
  status: StringEnum(PAYOUT_STATUSES),
  payoutMethodType: StringEnum(['bank', 'paypal']),
  externalReference: nullable(Type.String({ description: "the payment provider's reference" })),
  periodStart: Timestamp(),
  periodEnd: Timestamp(),
  transactionIds: Type.Array(Id()),
  failureReason: nullable(Type.String()),
  paidAt: nullable(Timestamp()),
  createdAt: Timestamp(),
});

export const PayoutTransactionSchema = Type.Object({
  transactionId: Id(),
  appId: Id(),
  storeId: Id(),
  amount: Money('what the merchant paid'),
  developerAmount: Money("the developer's share, in the transaction's currency"),
  currency: Type.String(),
  fxRate: Type.String({ description: "the rate that turned the developer's share into the payout's currency" }),
  usdDeveloperAmount: Money("the developer's share in USD"),
  createdAt: Timestamp(),
});

/** The payout method as shown: a bank account number masked but for its last four characters (C10.4). */
export const PayoutMethodSchema = nullable(Type.Object({
  type: StringEnum(['bank', 'paypal']),
  email: Type.Optional(Type.String({ description: 'paypal' })),
  accountHolder: Type.Optional(Type.String({ description: 'bank' })),
  accountNumber: Type.Optional(Type.String({ description: 'bank: masked, `*****1234`' })),
  routingNumber: Type.Optional(Type.String({ description: 'bank' })),
  updatedAt: nullable(Timestamp()),
}), { description: 'null until the developer sets one' });

/** `PUT /apps/developer/payout-method`: bank (accountHolder, accountNumber, routingNumber) or paypal (email). */
export const PayoutMethodBody = Type.Object({
  type: Type.String({ description: 'bank or paypal' }),
  email: Type.Optional(Type.String({ description: 'paypal: an email address' })),
  accountHolder: Type.Optional(Type.String({ description: 'bank' })),
  accountNumber: Type.Optional(Type.String({ description: 'bank: 4 to 34 letters or digits; stored encrypted' })),
  routingNumber: Type.Optional(Type.String({ description: 'bank: 4 to 15 letters or digits' })),
});

export const DeveloperSettingsSchema = Type.Object({
  developerId: Id(),
  payoutSchedule: StringEnum(PAYOUT_SCHEDULES),
  minimumPayoutAmount: Money(),
  currency: Type.Literal('USD'),
  commissionRate: nullable(Type.Number({ description: "the platform's share, 0 to 1; null: the platform rate" })),
  payoutMethod: PayoutMethodSchema,
  nextPayoutAt: nullable(Timestamp('the next payout sweep; null without a payout method')),
});

export const DeveloperSettingsBody = Type.Object({
  payoutSchedule: Type.Optional(Type.String({ description: PAYOUT_SCHEDULES.join(', ') })),
  minimumPayoutAmount: Type.Optional(Type.Union([Type.String(), Type.Number()], { description: 'a non-negative amount such as "25.00"' })),
  commissionRate: Type.Optional(nullable(Type.Number({ description: 'from 0 to 1; null: the platform rate' }))),
});

export const EarningsSchema = Type.Object({
  totalEarned: Money(),
  totalPaidOut: Money(),
  balance: Money('available to pay out'),
  inFlight: Money('in payouts not yet paid'),
  currency: Type.Literal('USD'),
  nextPayoutAt: nullable(Timestamp()),
  minimumPayoutAmount: Money(),
});

export const DeveloperAnalyticsSchema = Type.Object({
  apps: Type.Array(Type.Object({ appId: Id(), name: Type.String(), installCount: Type.Integer(), rating: Type.Number(), reviewCount: Type.Integer() })),
  totalRevenue: Type.Number({ description: "the developer's share of paid transactions in USD, 2 decimals (C14.12)" }),
  totalInstalls: Type.Integer(),
  totalTransactions: Type.Integer(),
});

const { appId: _appId, scopes: _scopes, app: _app, ...installationFields } = InstallationSchema.properties;

/** app-api.md's Installation row: the installation without app and scopes, with its store. */
export const DeveloperInstallationSchema = Type.Object({
  ...installationFields,
  store: Type.Object({ id: Id(), business: Type.String(), storeURL: Type.String(), email: Type.String() }),
});
