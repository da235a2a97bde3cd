import type { TSchema } from 'typebox';
import { describeValidation } from '../../validation.js';
import type { Section } from '../check.js';
import { DocumentError, documentAjv } from '../parse.js';
import { ProductionBlock, ProductionDocument } from '../schema.js';

/*
 * The document's schema applied object by object (a streamed document is never whole): each
 * section's item schema compiled once; a refusal names the object's path in the document, as
 * the whole-document check does.
 */

type Check = (item: unknown, i: number) => void;
const compiled = new Map<string, Check>();

function compile(schema: TSchema, prefix: (i: number) => string): Check {
  const validate = documentAjv.compile(schema);
  return (item, i) => {
    if (validate(item)) return;
    const errors = (validate.errors ?? []).map((e) => ({
      ...e,
      instancePath: `${prefix(i)}${e.instancePath}`,
    }));
    throw new DocumentError(describeValidation(errors, 'document'));
  };
}

/** Checks one object of a section against the section's item schema. */
export function itemValidator(section: Section): Check {
  let check = compiled.get(section);
  if (!check) {
    const items: TSchema = ProductionDocument.properties[section].items;
    check = compile(items, (i) => `/${section}/${i}`);
    compiled.set(section, check);
  }
  return check;
}

export const checkProductionBlock: (p: unknown) => void = (() => {
  const check = compile(ProductionBlock, () => '/production');
  return (p: unknown) => check(p, 0);
})();
