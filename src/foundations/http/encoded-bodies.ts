import { type Compression, type ContentCoding, compress } from './content-encoding.js';

interface Encodings {
  text?: string;
  br?: Promise<Buffer>;
  gzip?: Promise<Buffer>;
}

/**
 * The body of an immutable object (a served view: a change replaces it) in each content coding, made at most
 * once per object and coding, on first demand: thousands of SDKs fetching one new version cost one
 * compression, and requests that arrive while it runs wait for the same one. Held as long as the object is
 * (a WeakMap), so a replaced view's bodies go with it.
 */
export class EncodedBodies<K extends object> {
  private readonly bodies = new WeakMap<K, Encodings>();

  /** `text` makes the identity body: once per object and coding at most. */
  constructor(private readonly text: (key: K) => string) {}

  /** The identity body of `key` as a string, or its compressed bytes. */
  get(key: K, coding: ContentCoding): string | Promise<Buffer> {
    let entry = this.bodies.get(key);
    if (entry === undefined) {
      entry = {};
      this.bodies.set(key, entry);
    }
    if (coding === 'identity') {
      entry.text ??= this.text(key);
      return entry.text;
    }
    entry[coding] ??= this.compressOnce(key, entry, coding);
    return entry[coding];
  }

  private compressOnce(key: K, entry: Encodings, coding: Compression): Promise<Buffer> {
    // The text is kept only once identity is asked for: clients that take compression need only the bytes.
    const made = compress(entry.text ?? this.text(key), coding, 'stored');
    // A failure is not kept: the next request tries again.
    made.catch(() => {
      if (entry[coding] === made) entry[coding] = undefined;
    });
    return made;
  }
}
