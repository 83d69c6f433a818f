import { randomBytes } from 'node:crypto';

/** The kinds of API key (docs/credentials.md); `session` principals come from the dashboard, not from keys. */
export const KEY_KINDS = ['admin', 'agent', 'sdk'] as const;
export type KeyKind = (typeof KEY_KINDS)[number];

export const KIND_PREFIX: Readonly<Record<KeyKind, string>> = {
  admin: 'svc_adm_',
  agent: 'svc_agt_',
  sdk: 'svc_sdk_',
};

/** All three kind prefixes have this length, so the kind is read from a fixed slice. */
const KIND_PREFIX_LENGTH = 8;
/** 32 base62 characters ≈ 190 bits: far beyond brute force, which is why a fast hash is enough. */
export const GENERATED_SECRET_LENGTH = 32;
/** How many secret characters the non-secret prefix shows for a key of normal length. */
export const PREFIX_SECRET_CHARS = 8;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 248 = 4 × 62: bytes at or above it are discarded so every character is equally likely. */
const UNBIASED_LIMIT = 248;

const ORG_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export function isKeyKind(value: unknown): value is KeyKind {
  return value === 'admin' || value === 'agent' || value === 'sdk';
}

export function isOrgName(value: unknown): value is string {
  return typeof value === 'string' && ORG_NAME.test(value);
}

/** The kind a raw key claims by its prefix, or null when it has none of ours. */
export function kindOfKey(rawKey: string): KeyKind | null {
  switch (rawKey.slice(0, KIND_PREFIX_LENGTH)) {
    case KIND_PREFIX.admin:
      return 'admin';
    case KIND_PREFIX.agent:
      return 'agent';
    case KIND_PREFIX.sdk:
      return 'sdk';
    default:
      return null;
  }
}

/** The secret part of a key: everything after the kind prefix. */
export function secretOf(rawKey: string): string {
  return rawKey.slice(KIND_PREFIX_LENGTH);
}

/**
 * How many secret characters the prefix may show. Never more than half of the secret, so that the
 * prefix of a short (hand-made bootstrap) key still leaves most of it hidden.
 */
export function prefixSecretChars(secretLength: number): number {
  return Math.min(PREFIX_SECRET_CHARS, Math.floor(secretLength / 2));
}

/** The non-secret identifying start of a key, shown in listings and the audit trail. */
export function keyPrefix(rawKey: string): string {
  return rawKey.slice(0, KIND_PREFIX_LENGTH + prefixSecretChars(rawKey.length - KIND_PREFIX_LENGTH));
}

export function randomBase62(length: number, random: (size: number) => Buffer = randomBytes): string {
  let out = '';
  while (out.length < length) {
    for (const byte of random(length)) {
      if (byte < UNBIASED_LIMIT && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** A new key of the given kind: its prefix and 32 random base62 characters. */
export function generateKey(kind: KeyKind, random?: (size: number) => Buffer): string {
  return KIND_PREFIX[kind] + randomBase62(GENERATED_SECRET_LENGTH, random);
}

/** The credential of an `Authorization: Bearer <token>` header, or null when there is none. */
export function bearerToken(header: string | undefined | null): string | null {
  if (!header) return null;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match ? match[1] : null;
}
