import { compileEnvironment, type JsonValue, type SnapshotFlag } from '@flagops/core';
import { toFlagopsContext } from '@flagops/openfeature';
import { createClient } from '@flagops/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate } from '../eval-server/harness.js';
import { quiet, type SdkHarness, startSdkHarness } from '../sdk/sdk-harness.js';

// JSON.parse keeps "__proto__" as an own key, as every JSON body and file does; an object literal would not.
const PROTO_VALUE = JSON.parse('{"__proto__":{"polluted":true},"plain":1}') as JsonValue;
const PROTO_ATTRIBUTES = JSON.parse('{"__proto__":"yes"}') as Record<string, unknown>;

const flags = [
  { key: 'config', kind: 'json' as const, valueOn: PROTO_VALUE, valueOff: {} },
  { key: 'constructor', kind: 'string' as const, valueOn: 'built', valueOff: 'not built' },
  {
    key: 'proto-rule',
    rolloutPct: 0,
    rules: [{ id: 'has-proto', serve: 'on' as const, conditions: [{ attribute: '__proto__', op: 'eq' as const, value: 'yes' }] }],
  },
  {
    key: 'constructor-rule',
    rolloutPct: 0,
    rules: [{ id: 'ctor', serve: 'on' as const, conditions: [{ attribute: 'constructor', op: 'neq' as const, value: 'x' }] }],
  },
];

describe('keys named __proto__ or constructor (flag values, flag keys, attributes)', () => {
  let h: SdkHarness;

  beforeAll(async () => {
    h = await startSdkHarness(flags);
  });
  afterAll(async () => {
    await h?.stop();
  });

  describe('POST /v1/evaluate', () => {
    it('serves a json value with a "__proto__" key exactly as the snapshot holds it', async () => {
      const evaluated = await (await evaluate(h, h.key, { key: 'config' })).text();
      const snapshot = (await (
        await fetch(`${h.service.evalUrl}/v1/snapshot`, { headers: { authorization: `Bearer ${h.key}` } })
      ).json()) as {
        flags: Record<string, SnapshotFlag>;
      };
      expect(evaluated).toBe('{"config":{"value":{"__proto__":{"polluted":true},"plain":1},"reason":"default","variation":"on"}}');
      expect(JSON.stringify(snapshot.flags.config.valueOn)).toBe('{"__proto__":{"polluted":true},"plain":1}');
    });

    it('answers the key "__proto__" like any unknown key', async () => {
      const text = await (await evaluate(h, h.key, { keys: ['__proto__', 'constructor'] })).text();
      expect(text).toBe(
        '{"__proto__":{"value":null,"reason":"flag_not_found"},"constructor":{"value":"built","reason":"default","variation":"on"}}',
      );
    });

    it('reads an attribute "__proto__" sent in the context, and no inherited "constructor"', async () => {
      const body = await (
        await evaluate(h, h.key, { keys: ['proto-rule', 'constructor-rule'], context: { attributes: PROTO_ATTRIBUTES } })
      ).json();
      expect(body['proto-rule']).toMatchObject({ reason: 'rule_match', ruleId: 'has-proto' });
      expect(body['constructor-rule']).toMatchObject({ reason: 'default', variation: 'off' });
    });
  });

  it('the OFREP bulk evaluation lists the json value with its "__proto__" key', async () => {
    const res = await fetch(`${h.service.evalUrl}/ofrep/v1/evaluate/flags`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json' },
      body: '{"context":{"__proto__":"yes"}}',
    });
    const body = (await res.json()) as { flags: Array<{ key: string; value: unknown; variant: string }> };
    expect(JSON.stringify(body.flags.find((f) => f.key === 'config')?.value)).toBe('{"__proto__":{"polluted":true},"plain":1}');
    expect(body.flags.find((f) => f.key === 'proto-rule')?.variant).toBe('on');
  });

  for (const mode of ['local', 'remote'] as const) {
    it(`the SDK in ${mode} mode serves the same value, the flag "constructor" and the attribute "__proto__"`, async () => {
      const client = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, mode, stream: false, logger: quiet });
      try {
        await client.ready();
        expect(JSON.stringify(await client.json('config', null))).toBe('{"__proto__":{"polluted":true},"plain":1}');
        expect(await client.string('constructor', 'default')).toBe('built');
        expect(await client.boolean('proto-rule', false, { attributes: PROTO_ATTRIBUTES })).toBe(true);
        expect(await client.boolean('constructor-rule', true)).toBe(false);
        expect(await client.details('toString', 'fallback')).toMatchObject({ value: 'fallback', errorCode: 'FLAG_NOT_FOUND' });
      } finally {
        await client.close();
      }
    });
  }
});

describe('the evaluation core and the OpenFeature context', () => {
  it('compiles a flag keyed "__proto__" from a parsed snapshot and evaluates it', () => {
    const snapshotFlags = JSON.parse(
      '{"__proto__":{"enabled":true,"rolloutPct":100,"valueOn":{"__proto__":1},"valueOff":null,"rules":[],"killed":false,"archived":false,"defaultValue":null}}',
    ) as Record<string, SnapshotFlag>;
    const compiled = compileEnvironment(snapshotFlags);
    expect(compiled.keys).toEqual(['__proto__']);
    expect(JSON.stringify(compiled.evaluate('__proto__', {}).value)).toBe('{"__proto__":1}');
  });

  it('keeps an OpenFeature context field "__proto__" as an attribute', () => {
    const context = toFlagopsContext(JSON.parse('{"targetingKey":"u1","__proto__":"yes"}'));
    expect(JSON.stringify(context)).toBe('{"userId":"u1","attributes":{"__proto__":"yes"}}');
  });
});
