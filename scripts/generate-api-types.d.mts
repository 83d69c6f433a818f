/** Types of scripts/generate-api-types.mjs for its test. */

/** Where the generated types are written, relative to the repository. */
export const API_TYPES_FILE: string;
/** Every schema file, keyed by its path under schemas/ (`common.schema.json`, `api/kill.schema.json`). */
export function readSchemas(dir?: string): Record<string, unknown>;
/** The TypeScript source of the body types of `schemas` (as readSchemas returns them). */
export function generateApiTypes(schemas: Record<string, unknown>): string;
