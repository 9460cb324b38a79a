// Reads on a hot path that arrive together go to the database together (the storefront's shipping
// rate quotes): each caller asks for one key; the keys asked for in the same turn of the event loop
// are read by one statement, in chunks of at most `maxBatch`. Requests that arrive together reach
// their handlers in the same turn (the sockets that were ready are read one after another before
// `setImmediate` callbacks run), so under load a statement serves several requests, and a lone
// request is sent at the end of its turn, having waited for nothing but the turn's other work.
//
// Why: for a short statement, what PostgreSQL and the driver spend per statement (the round trip,
// the executor's set-up, the locks of every table named, the protocol messages) outweighs what a
// key adds. Measured on the quote statement (docs/decisions.md): about 2.5 times the keys per second
// at eight keys a statement.
//
// Each key's answer is its own: the statement gives each row with the position of the key it
// answers, and a key with no row gets null. A failed statement fails every read it carried, as each
// would have failed on its own.

export interface BatchReaderOptions<K, V> {
  /** Reads the keys (at most `maxBatch`) in one statement: one answer per key, in order, null when not found. */
  read(keys: K[]): Promise<(V | null)[]>;
  maxBatch: number;
}

interface Waiting<K, V> {
  key: K;
  resolve: (value: V | null) => void;
  reject: (err: unknown) => void;
}

export class BatchReader<K, V> {
  private gathered: Waiting<K, V>[] = [];

  constructor(private readonly options: BatchReaderOptions<K, V>) {}

  load(key: K): Promise<V | null> {
    return new Promise((resolve, reject) => {
      if (this.gathered.length === 0) setImmediate(() => this.flush());
      this.gathered.push({ key, resolve, reject });
    });
  }

  private flush(): void {
    const waiting = this.gathered;
    this.gathered = [];
    for (let i = 0; i < waiting.length; i += this.options.maxBatch) {
      const chunk = waiting.slice(i, i + this.options.maxBatch);
      // A read that throws before its promise is a failed read too, never an unhandled throw here.
      new Promise<(V | null)[]>((resolve) => resolve(this.options.read(chunk.map((w) => w.key)))).then(
        (values) => chunk.forEach((w, j) => w.resolve(values[j] ?? null)),
        (err) => chunk.forEach((w) => w.reject(err)),
      );
    }
  }
}
