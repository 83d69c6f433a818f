import { type EnvironmentName, isEnvironmentName } from '@flagops/core';
import { FlagopsError } from '../../errors/flagops-error.js';
import { InvalidInputError } from '../../errors/kinds.js';

/** An `:env` path segment: an unknown environment is a resource that does not exist (contract §3: 404). */
export function environmentParam(value: string): EnvironmentName {
  if (!isEnvironmentName(value))
    throw new FlagopsError('not_found', `environment ${JSON.stringify(value)} not found; environments are dev, staging and prod`);
  return value;
}

type Query = Readonly<Record<string, string | string[] | undefined>>;

/** A query parameter given at most once; an empty value counts as absent. */
export function optionalQuery(query: Query, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw new InvalidInputError(`${name}: must be given at most once`, name);
  return value === undefined || value === '' ? undefined : value;
}

export function requiredQuery(query: Query, name: string): string {
  const value = optionalQuery(query, name);
  if (value === undefined) throw new InvalidInputError(`${name}: the query parameter is required`, name);
  return value;
}

/** A whole number query parameter within [min, max], or `fallback` when absent. */
export function integerQuery(query: Query, name: string, options: { min: number; max: number; fallback: number }): number {
  const value = optionalQuery(query, name);
  if (value === undefined) return options.fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < options.min || n > options.max) {
    throw new InvalidInputError(`${name}: must be a whole number from ${options.min} to ${options.max}`, name);
  }
  return n;
}
