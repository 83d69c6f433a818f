import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { EncodedBodies } from '../../src/foundations/http/encoded-bodies.js';

describe('EncodedBodies: a body per immutable object and coding', () => {
  const json = JSON.stringify({
    flags: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`flag-${i}`, { enabled: i % 2 === 0 }])),
  });

  it('compresses once per coding, requests that arrive meanwhile sharing the compression', async () => {
    let made = 0;
    const bodies = new EncodedBodies<{ id: number }>(() => {
      made++;
      return json;
    });
    const view = { id: 1 };
    const first = bodies.get(view, 'br');
    expect(bodies.get(view, 'br')).toBe(first);
    expect(made).toBe(1);
    expect(brotliDecompressSync(await first).toString()).toBe(json);
    expect(await bodies.get(view, 'br')).toBe(await first);
    expect(gunzipSync(await bodies.get(view, 'gzip')).toString()).toBe(json);
    expect(made).toBe(2);
    expect(bodies.get(view, 'identity')).toBe(json);
    expect(bodies.get(view, 'identity')).toBe(json);
    expect(made).toBe(3);
  });

  it('keeps the bodies of each object apart', async () => {
    const bodies = new EncodedBodies<{ text: string }>((o) => o.text);
    const a = { text: '{"a":1}' };
    const b = { text: '{"b":2}' };
    expect(gunzipSync(await bodies.get(a, 'gzip')).toString()).toBe(a.text);
    expect(gunzipSync(await bodies.get(b, 'gzip')).toString()).toBe(b.text);
  });
});
