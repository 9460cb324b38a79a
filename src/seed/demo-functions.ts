// The demo app's functions (C11): one of each target, declared in its manifest, so a fresh demo
// store shows what functions do at a checkout. They are also the examples of docs/functions.md
// (test/functions-docs.test.ts runs that file's examples).

/** Delivery options: hide every rate dearer than `configuration.maxPrice`. */
const hideDearRates = {
  handle: 'hide-dear-rates',
  target: 'cart.delivery-options.transform.run',
  title: 'Hide shipping rates over a price',
  expression: `{"operations": input.deliveryOptions
  .filter(o, double(o.price) > double(configuration.maxPrice))
  .map(o, {"hide": {"handle": o.handle}})}`,
  configuration: { maxPrice: '15.00' },
};

/** Payment methods: no cash on delivery above `configuration.codLimit`; the card first. */
const codLimit = {
  handle: 'cod-limit',
  target: 'cart.payment-methods.transform.run',
  title: 'Cash on delivery up to a limit',
  expression: `{"operations": (double(input.checkout.total_price) > double(configuration.codLimit)
  ? [{"hide": {"handle": "cod"}}] : [])
  + [{"move": {"handle": "card", "index": 0}}]}`,
  configuration: { codLimit: '100.00' },
};

/** Validations: at most `configuration.maxPerLine` of any one item. */
const maxPerLine = {
  handle: 'max-per-line',
  target: 'cart.validations.generate.run',
  title: 'At most a few of each item',
  expression: `{"operations": [{"validationAdd": {"errors": input.checkout.line_items
  .filter(l, l.quantity > double(configuration.maxPerLine))
  .map(l, {"message": "At most " + string(int(configuration.maxPerLine)) + " of " + l.title + " per order", "target": l.id})}}]}`,
  configuration: { maxPerLine: 5 },
};

/** Discounts: 10 % off each line of 3 or more. */
const buyThree = {
  handle: 'buy-three-save-ten',
  target: 'cart.lines.discounts.generate.run',
  title: 'Buy 3, save 10 %',
  expression: `input.checkout.line_items.exists(l, l.quantity >= 3.0)
  ? {"operations": [{"productDiscountAdd": {
      "message": "Buy 3, save 10%",
      "lineIds": input.checkout.line_items.filter(l, l.quantity >= 3.0).map(l, l.id),
      "value": {"percentage": 10}}}]}
  : {"operations": []}`,
  configuration: {},
};

export const DEMO_FUNCTIONS = [hideDearRates, codLimit, maxPerLine, buyThree];
