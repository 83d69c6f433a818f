import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { isDate, isDateTime } from './date-time.js';
import { nestsDeeperThan } from './json-value.js';
import {
  API_SCHEMAS,
  type ApiSchemaName,
  apiSchemaPath,
  DOCUMENT_SCHEMAS,
  type DocumentSchemaName,
  documentSchemaPath,
  loadSchemaFiles,
  SCHEMA_BASE_URI,
} from './schema-files.js';

/**
 * The one Ajv instance: every schema compiled once, at module load, so a broken schema fails the process at
 * start and request bodies and repository files are checked by the same compiled code.
 */
const ajv = new Ajv2020({
  allErrors: true,
  // parentSchema on each error lets error-messages.ts read our `x-error` annotation.
  verbose: true,
  strict: true,
  // `properties` inside `if` subschemas is deliberate: the parent schema already fixes the type.
  strictTypes: false,
  // A stored rule adds `required: ["id"]` beside a $ref to the rule; strictRequired cannot see through $ref.
  strictRequired: false,
});

ajv.addFormat('date-time', { type: 'string', validate: isDateTime });
// An expiry may be a day (`2027-03-31`) or an instant.
ajv.addFormat('date-or-date-time', { type: 'string', validate: (value: string) => isDate(value) || isDateTime(value) });
// Annotation only: a readable message for errors on the schema that carries it (string, or per keyword); on an
// anyOf of enums, `{values}` in it stands for their values (error-messages.ts).
ajv.addKeyword({ keyword: 'x-error', schemaType: ['string', 'object'] });
// Flag values may be any JSON, but not nested without end: every writer and reader of them recurses.
ajv.addKeyword({
  keyword: 'x-max-depth',
  schemaType: 'number',
  type: ['object', 'array'],
  errors: false,
  validate: (maxDepth: number, data: unknown) => !nestsDeeperThan(data, maxDepth),
});

for (const schema of loadSchemaFiles()) ajv.addSchema(schema);

function compile(relative: string): ValidateFunction {
  const validate = ajv.getSchema(SCHEMA_BASE_URI + relative);
  if (!validate) throw new Error(`schema ${relative} is not loaded`);
  return validate;
}

export const documentValidators = Object.fromEntries(DOCUMENT_SCHEMAS.map((name) => [name, compile(documentSchemaPath(name))])) as Record<
  DocumentSchemaName,
  ValidateFunction
>;

export const apiValidators = Object.fromEntries(API_SCHEMAS.map((name) => [name, compile(apiSchemaPath(name))])) as Record<
  ApiSchemaName,
  ValidateFunction
>;
