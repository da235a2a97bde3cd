import type { AssetKind } from './plan.js';
import { nth } from './random.js';

/** The departments of a generated season: the same twenty at every scale. */
export const DEPARTMENTS = [
  { slug: 'production', name: 'Production', cluster: 'Production', accounts: ['1100', '1200', '9000'] },
  { slug: 'script', name: 'Script', cluster: 'Production', accounts: ['1300'] },
  { slug: 'casting', name: 'Casting', cluster: 'Production', accounts: ['1400'] },
  { slug: 'locations', name: 'Locations', cluster: 'Production', accounts: ['1500', '1510'] },
  { slug: 'accounts', name: 'Accounts', cluster: 'Production', accounts: ['1900'] },
  { slug: 'art', name: 'Art', cluster: 'Art', accounts: ['2100', '2150'] },
  { slug: 'props', name: 'Props', cluster: 'Art', accounts: ['2200', '2210'] },
  { slug: 'costume', name: 'Costume', cluster: 'Art', accounts: ['2300', '2310'] },
  { slug: 'hmu', name: 'Hair & Make-up', cluster: 'Art', accounts: ['2400'] },
  { slug: 'sfx', name: 'Special Effects', cluster: 'Art', accounts: ['2500'] },
  { slug: 'stunts', name: 'Stunts', cluster: 'Production', accounts: ['2600'] },
  { slug: 'transport', name: 'Transport', cluster: 'Production', accounts: ['2700'] },
  { slug: 'camera', name: 'Camera', cluster: 'Camera & Lighting', accounts: ['3100', '3110'] },
  { slug: 'grip', name: 'Grip', cluster: 'Camera & Lighting', accounts: ['3200'] },
  { slug: 'electric', name: 'Electric', cluster: 'Camera & Lighting', accounts: ['3300'] },
  { slug: 'sound', name: 'Sound', cluster: 'Sound', accounts: ['3400'] },
  { slug: 'editorial', name: 'Editorial', cluster: 'Post', accounts: ['4100', '4150'] },
  { slug: 'vfx', name: 'Visual Effects', cluster: 'Post', accounts: ['4200', '4210'] },
  { slug: 'music', name: 'Music', cluster: 'Post', accounts: ['4300'] },
  { slug: 'post', name: 'Post Production', cluster: 'Post', accounts: ['4400'] },
] as const;

export type DepartmentSlug = (typeof DEPARTMENTS)[number]['slug'];

/** Departments that send work to outside vendors and receive it back. */
export const VENDOR_DEPARTMENTS: DepartmentSlug[] = ['vfx', 'costume', 'editorial', 'post', 'sound', 'sfx'];

const OTHER_DEPARTMENTS: DepartmentSlug[] = ['vfx', 'sfx', 'hmu', 'stunts', 'art'];

/** The department that owns an asset of a kind (`i` is its index within the kind). */
export function departmentOf(kind: AssetKind, i: number): DepartmentSlug {
  switch (kind) {
    case 'character':
      return 'casting';
    case 'costume':
      return 'costume';
    case 'location':
      return 'locations';
    case 'set':
      return 'art';
    case 'prop':
      return 'props';
    case 'vehicle':
      return 'transport';
    case 'other':
      return nth(OTHER_DEPARTMENTS, i);
  }
}
