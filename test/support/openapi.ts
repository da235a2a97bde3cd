import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** A schema as written, or the named schema its `$ref` points to (`#/components/schemas/Name`). */
export function deref(doc: any, schema: any): any {
  const ref = schema?.$ref;
  if (typeof ref !== 'string') return schema;
  const name = /^#\/components\/schemas\/(.+)$/.exec(ref)?.[1];
  if (!name || !doc.components?.schemas?.[name]) throw new Error(`unresolvable $ref ${ref}`);
  return doc.components.schemas[name];
}

const ROOT = 'https://openapi.invalid/';

/**
 * A validator for any schema of the document, its `$ref`s to named schemas resolved against the
 * document's own components.
 */
export function documentValidator(doc: any): (schema: any, value: unknown) => string | null {
  const ajv = new Ajv({ strict: false, allErrors: true });
  ((addFormats as any).default ?? addFormats)(ajv);
  ajv.addSchema({ $id: ROOT, components: doc.components });
  let n = 0;
  return (schema, value) => {
    const rooted = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${ROOT}#/components/`));
    const validate = ajv.compile({ ...rooted, $id: `${ROOT}check/${n++}` });
    return validate(value) ? null : ajv.errorsText(validate.errors);
  };
}
