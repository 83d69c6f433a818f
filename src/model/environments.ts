/** Every project has exactly these three environments (service-spec §1). */
export const ENVIRONMENTS = ['dev', 'staging', 'prod'] as const;
export type EnvironmentName = (typeof ENVIRONMENTS)[number];

export function isEnvironmentName(value: unknown): value is EnvironmentName {
  return value === 'dev' || value === 'staging' || value === 'prod';
}
