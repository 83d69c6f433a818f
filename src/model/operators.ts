/** The twelve condition operators (service-spec §2) and the value type each needs (contract §4). */
export const OPERATORS = [
  'eq',
  'neq',
  'in',
  'not_in',
  'contains',
  'gt',
  'gte',
  'lt',
  'lte',
  'semver_eq',
  'semver_gt',
  'semver_lt',
] as const;
export type Operator = (typeof OPERATORS)[number];

/** What a condition's `value` must be for its operator; enforced by the schema at write time. */
export const OPERATOR_VALUE_TYPE: Readonly<Record<Operator, 'scalar' | 'array' | 'string-or-scalar' | 'number' | 'semver'>> = {
  eq: 'scalar',
  neq: 'scalar',
  in: 'array',
  not_in: 'array',
  contains: 'string-or-scalar',
  gt: 'number',
  gte: 'number',
  lt: 'number',
  lte: 'number',
  semver_eq: 'semver',
  semver_gt: 'semver',
  semver_lt: 'semver',
};
