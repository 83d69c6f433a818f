import { readFileSync } from 'node:fs';
import { API_SCHEMAS, type ApiSchemaName } from './api-types.generated.js';

/** Documents of the flags repository, each with a schema in schemas/ (docs/flags-repository.md). */
export const DOCUMENT_SCHEMAS = ['project', 'flag', 'environment-config', 'kills', 'segment'] as const;
export type DocumentSchemaName = (typeof DOCUMENT_SCHEMAS)[number];

// Control-plane request bodies, each with a schema in schemas/api/: listed with their types by the generator.
export { API_SCHEMAS, type ApiSchemaName };

export const SCHEMA_BASE_URI = 'https://flagops.dev/schemas/';

// schemas/ sits three levels above both src/foundations/validation and dist/foundations/validation, and ships in the package.
const SCHEMAS_DIR = new URL('../../../schemas/', import.meta.url);

function load(relative: string): Record<string, unknown> {
  const schema = JSON.parse(readFileSync(new URL(relative, SCHEMAS_DIR), 'utf8')) as Record<string, unknown>;
  if (schema.$id !== SCHEMA_BASE_URI + relative) throw new Error(`schemas/${relative}: $id must be ${SCHEMA_BASE_URI + relative}`);
  return schema;
}

export const documentSchemaPath = (name: DocumentSchemaName) => `${name}.schema.json`;
export const apiSchemaPath = (name: ApiSchemaName) => `api/${name}.schema.json`;

/** Every schema file, read once: the shared definitions, the documents, the request bodies. */
export function loadSchemaFiles(): Array<Record<string, unknown>> {
  return [
    load('common.schema.json'),
    ...DOCUMENT_SCHEMAS.map((name) => load(documentSchemaPath(name))),
    ...API_SCHEMAS.map((name) => load(apiSchemaPath(name))),
  ];
}
