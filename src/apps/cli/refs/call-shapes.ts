/**
 * The SDK evaluation calls whose flag-key argument `flagops refs` reads, per language: the flagops SDKs
 * (JavaScript/TypeScript, Go, Python), OpenFeature's clients, and so the accessors `flagops generate` writes
 * (they call the SDK with the key). Only a literal key is read: a key built at run time is not known here.
 * Each shape is a method call (`client.boolean(…)`), the key a quoted literal of flag-key syntax.
 */
export type Language = 'js' | 'go' | 'python';

const EXTENSIONS: Record<string, Language> = {
  js: 'js',
  jsx: 'js',
  mjs: 'js',
  cjs: 'js',
  ts: 'js',
  tsx: 'js',
  mts: 'js',
  cts: 'js',
  vue: 'js',
  svelte: 'js',
  go: 'go',
  py: 'python',
  pyi: 'python',
};

/** The language whose SDK calls a file may hold, from its extension; undefined: none is read. */
export function languageOf(path: string): Language | undefined {
  const dot = path.lastIndexOf('.');
  return dot < 0 ? undefined : EXTENSIONS[path.slice(dot + 1)];
}

/** Flag-key syntax: 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit. */
const KEY = '[A-Za-z0-9][A-Za-z0-9._-]{0,127}';

const alternatives = (names: readonly string[]) => names.join('|');

/**
 * JavaScript and TypeScript: @flagops/sdk's LocalClient and RemoteClient (`boolean`, `string`, `number`, `json`,
 * `details`, all `(key, default, context?)`) and OpenFeature's server and web clients (`get{Boolean,String,
 * Number,Object}{Value,Details}(key, default, …)`). A default always follows the key, so the comma is required:
 * `res.json('ok')` is not an evaluation. Type arguments (`client.json<Config>('key', …)`) are allowed.
 */
const JS_NAMES = [
  'boolean',
  'string',
  'number',
  'json',
  'details',
  ...['Boolean', 'String', 'Number', 'Object'].flatMap((t) => [`get${t}Value`, `get${t}Details`]),
];
const JS = new RegExp(`\\.\\s*(?:${alternatives(JS_NAMES)})\\s*(?:<[^<>()]*>)?\\s*\\(\\s*(["'\`])(${KEY})\\1\\s*,`, 'g');

/**
 * Go, the flagops SDK: `Bool`, `String`, `Number`, `JSON`, their `…Details`, and `Evaluate`, key first. The
 * standard library's and pflag's `flag.String("name", …)` / `cmd.Flags().Bool(…)` define command-line flags,
 * not feature flags, and are left out by their receiver.
 */
const GO_NAMES = ['Bool', 'String', 'Number', 'JSON'].flatMap((t) => [t, `${t}Details`]).concat('Evaluate');
const NOT_COMMAND_LINE = '(?<!(?:\\bp?flag|Flags\\(\\s*\\)))';
const GO = new RegExp(`${NOT_COMMAND_LINE}\\.\\s*(?:${alternatives(GO_NAMES)})\\s*\\(\\s*(["\`])(${KEY})\\1\\s*,`, 'g');

/**
 * Go, OpenFeature's client: `BooleanValue(ctx, key, …)` and the other types, their `…ValueDetails`, and the
 * value-only `Boolean(ctx, key, …)`: the key is the second argument, after a context such as `ctx`,
 * `context.Background()` or `r.Context()`.
 */
const GO_OPENFEATURE_NAMES = ['Boolean', 'String', 'Float', 'Int', 'Object'].flatMap((t) => [t, `${t}Value`, `${t}ValueDetails`]);
const GO_CONTEXT = '[A-Za-z_][\\w.]*(?:\\(\\s*\\))?';
const GO_OPENFEATURE = new RegExp(
  `${NOT_COMMAND_LINE}\\.\\s*(?:${alternatives(GO_OPENFEATURE_NAMES)})\\s*\\(\\s*${GO_CONTEXT}\\s*,\\s*(["\`])(${KEY})\\1\\s*,`,
  'g',
);

/**
 * Python, the flagops SDK: `boolean`, `string`, `number`, `json`, `details` (key, default, …) and `evaluate(key)`;
 * OpenFeature's client: `get_{boolean,string,integer,float,object}_{value,details}(flag_key, default, …)`.
 * The key may be passed as `flag_key=`; string prefixes (`r`, `u`) are allowed.
 */
const PY_NAMES = [
  'boolean',
  'string',
  'number',
  'json',
  'details',
  ...['boolean', 'string', 'integer', 'float', 'object'].flatMap((t) => [`get_${t}_value`, `get_${t}_details`]),
];
const PY = new RegExp(`\\.\\s*(?:${alternatives(PY_NAMES)})\\s*\\(\\s*(?:flag_key\\s*=\\s*)?[rRuU]?(["'])(${KEY})\\1\\s*,`, 'g');
const PY_EVALUATE = new RegExp(`\\.\\s*evaluate\\s*\\(\\s*(?:flag_key\\s*=\\s*)?[rRuU]?(["'])(${KEY})\\1\\s*[,)]`, 'g');

const SHAPES: Record<Language, readonly RegExp[]> = {
  js: [JS],
  go: [GO, GO_OPENFEATURE],
  python: [PY, PY_EVALUATE],
};

/** A flag key passed to an evaluation call: the key and the offset of its opening quote in the text. */
export interface EvaluatedKey {
  key: string;
  index: number;
}

/** The literal keys `text` passes to the evaluation calls of `language`'s SDKs. */
export function evaluatedKeys(text: string, language: Language): EvaluatedKey[] {
  const found: EvaluatedKey[] = [];
  for (const shape of SHAPES[language]) {
    shape.lastIndex = 0;
    for (let m = shape.exec(text); m !== null; m = shape.exec(text)) {
      // The key literal is the last quoted run of the match, before the separator that ends it.
      const literal = `${m[1]}${m[2]}${m[1]}`;
      found.push({ key: m[2], index: m.index + m[0].lastIndexOf(literal) });
    }
  }
  return found;
}
