import type { Db } from '../../db/index.js';
import { nowIso } from '../../db/values.js';
import { inWriteTransaction, type WriteHooks } from '../../db/write-hooks.js';
import { textProblem } from '../../domain/text.js';
import { errors } from '../../errors.js';
import { appendActivity } from '../../db/activity-log.js';
import { refOwner } from '../admin/repository.js';
import * as repo from './repository.js';
import type { Organisation } from '../admin-lookup/schemas.js';
import type { NewOrganisation } from './schemas.js';
import { auditAdmin, type AdminActor } from '../admin/service.js';

/** Two names are one when they match case-insensitively after trimming. */
const sameName = (a: string, b: string): boolean => a.trim().toLowerCase() === b.trim().toLowerCase();

/** `org-brand-new-vfx-co` from "Brand New VFX Co." (letters and digits kept, the rest one dash). */
export function refFromName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return `org-${slug || 'vendor'}`;
}

/** The first of `base`, `base-2`, `base-3`… that names nothing in the production yet. */
async function freeRef(db: Db, productionId: number, base: string): Promise<string> {
  for (let n = 1; ; n++) {
    const ref = n === 1 ? base : `${base}-${n}`;
    if ((await refOwner(db, productionId, ref)) === null) return ref;
  }
}

function checkedName(input: NewOrganisation): string {
  const name = input.name.trim();
  if (name === '') throw errors.invalid('name', 'must not be blank');
  const problem = textProblem(name, 'line');
  if (problem !== null) throw errors.invalid('name', problem);
  return name;
}

/**
 * Adds a vendor organisation (admin API and CLI alike): 409 when the production already has
 * one of that name (case-insensitively, trimmed) or anything under that ref. One transaction
 * with its activity entry and its change (kind `organisation`).
 */
export async function addOrganisation(
  db: Db,
  productionId: number,
  actor: AdminActor,
  input: NewOrganisation,
  hooks?: WriteHooks<Organisation>,
): Promise<Organisation> {
  const name = checkedName(input);
  return inWriteTransaction(db, { productionId, actor: actor.name }, hooks, async (trx, changes) => {
    const same = (await repo.organisationNames(trx, productionId)).find((o) => sameName(o.name, name));
    if (same)
      throw errors.conflict(
        `name: organisation "${same.name}" (id ${same.id}${same.ref ? `, ref ${same.ref}` : ''}) already exists in this production`,
      );
    let ref = input.ref;
    if (ref !== undefined) {
      // the API's schema holds a ref to this already; the CLI's flag comes here unchecked
      if (!/^[A-Za-z0-9][A-Za-z0-9._:-]*$/.test(ref) || ref.length > 200)
        throw errors.invalid(
          'ref',
          'must be letters, digits, ".", "_", ":" or "-", starting with a letter or digit',
        );
      const taken = await refOwner(trx, productionId, ref);
      if (taken) throw errors.conflict(`ref: "${ref}" already names ${taken} in this production`);
    } else {
      ref = await freeRef(trx, productionId, refFromName(name));
    }
    const id = await repo.insertOrganisation(trx, { production_id: productionId, ref, name });
    changes.created('organisation', id);
    const summary = `organisation "${name}" (${ref})`;
    await auditAdmin(trx, productionId, actor, 'organisation.add', { type: 'organisation', id }, summary);
    await appendActivity(trx, {
      productionId,
      actor: actor.name,
      verb: 'added',
      summary,
      apiKeyId: actor.apiKeyId,
      personId: actor.personId,
      at: nowIso(),
    });
    return { id, ref, name, engagements: 0 };
  });
}
