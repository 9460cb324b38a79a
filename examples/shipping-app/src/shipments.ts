// What the app remembers: the shipments it created, per store. A real app keeps them in its
// database; in memory is enough to show what GDPR asks of it (export one customer's data, erase one
// customer, erase a store).
import { randomBytes } from 'node:crypto';

export interface Shipment {
  shop: string;
  orderId: string;
  orderName: string;
  email: string | null;
  customerId: string | null;
  trackingNumber: string;
  trackingUrl: string;
  createdAt: string;
}

export class Shipments {
  private readonly byShop = new Map<string, Shipment[]>();
  /** Data exports waiting to be fetched by the merchant, by their unguessable id. */
  private readonly exports = new Map<string, { shop: string; customerId: string | null; email: string | null }>();

  add(shipment: Shipment): void {
    const list = this.byShop.get(shipment.shop) ?? [];
    list.push(shipment);
    this.byShop.set(shipment.shop, list);
  }

  hasOrder(shop: string, orderId: string): boolean {
    return (this.byShop.get(shop) ?? []).some((s) => s.orderId === orderId);
  }

  /** A customer's shipments: by id, by email, or on one of the orders named. */
  ofCustomer(shop: string, who: { id: string | null; email: string | null }, orderIds: readonly string[] = []): Shipment[] {
    const email = who.email?.toLowerCase() ?? null;
    return (this.byShop.get(shop) ?? []).filter((s) =>
      (who.id !== null && s.customerId === who.id) || (email !== null && s.email?.toLowerCase() === email) || orderIds.includes(s.orderId));
  }

  /** A customer's data request: an export kept behind a link with 128 random bits. */
  prepareExport(shop: string, who: { id: string | null; email: string | null }): string {
    const id = randomBytes(16).toString('hex');
    this.exports.set(id, { shop, customerId: who.id, email: who.email });
    return id;
  }

  /**
   * The export's content now (so an erasure since it was prepared is honoured), or null when there
   * is no such export. A customer the app holds nothing about gets an empty export: that is the
   * answer to the data request, not a missing page.
   */
  readExport(id: string): { shipments: Shipment[] } | null {
    const e = this.exports.get(id);
    if (!e) return null;
    return { shipments: this.ofCustomer(e.shop, { id: e.customerId, email: e.email }) };
  }

  /** customers/redact: the customer's shipments and the exports prepared about them (other customers' stay). */
  eraseCustomer(shop: string, who: { id: string | null; email: string | null }, orderIds: readonly string[]): number {
    const gone = new Set(this.ofCustomer(shop, who, orderIds));
    this.byShop.set(shop, (this.byShop.get(shop) ?? []).filter((s) => !gone.has(s)));
    const email = who.email?.toLowerCase() ?? null;
    for (const [id, e] of this.exports) {
      const same = (who.id !== null && e.customerId === who.id) || (email !== null && e.email?.toLowerCase() === email);
      if (e.shop === shop && same) this.exports.delete(id);
    }
    return gone.size;
  }

  /** shop/redact: everything about the store. */
  eraseShop(shop: string): void {
    this.byShop.delete(shop);
    for (const [id, e] of this.exports) if (e.shop === shop) this.exports.delete(id);
  }
}
