import type { Db } from '../../db/index.js';
import { errors } from '../../errors.js';
import { productionFilespace } from './repository.js';

/** A storage call speaks for one filespace install; anything but the production's active one is 403. */
export async function assertActiveFilespace(db: Db, productionId: number, filespace: string): Promise<void> {
  const active = await productionFilespace(db, productionId);
  if (active === null) throw errors.forbidden('this production has no active filespace install');
  if (filespace !== active)
    throw errors.forbidden(`filespace "${filespace}" is not this production's active install`);
}
