// The payment methods a checkout offers (C15.1): the store's, meaning what they mean in C7.1 (card,
// UPI and wallet pay the order at once; cash on delivery and bank transfer leave it pending). The
// payment-method functions of C11.3 will hide, rename or reorder them; until then every checkout
// offers all five, in this order.
export interface PaymentMethodOffer {
  handle: string;
  title: string;
}

export const STORE_PAYMENT_METHODS: readonly PaymentMethodOffer[] = [
  { handle: 'card', title: 'Credit or debit card' },
  { handle: 'upi', title: 'UPI' },
  { handle: 'wallet', title: 'Wallet' },
  { handle: 'cod', title: 'Cash on delivery' },
  { handle: 'bank_transfer', title: 'Bank transfer' },
];

export function paymentMethodsOf(): PaymentMethodOffer[] {
  return STORE_PAYMENT_METHODS.map((m) => ({ ...m }));
}
