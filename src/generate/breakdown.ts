import { DEPARTMENTS, departmentOf } from './departments.js';
import {
  assetKindName,
  assetLabel,
  FABRICS,
  INGREDIENT_KINDS,
  personName,
  placeName,
  RELATIONS,
  TIMES_OF_DAY,
} from './names.js';
import {
  COSTUMES_PER_CHARACTER,
  episodeOfScene,
  kindOf,
  ref,
  RELEASED_SHARE,
  timeAt,
  versionCountOf,
  type Plan,
} from './plan.js';
import { nth, Rng } from './random.js';
import type { Item, Tally } from './tally.js';

/** The breakdown: episodes, organisations, departments, crew, scenes and assets with versions. */

const VENDOR_WORDS = ['Pixel', 'Halide', 'Bramble', 'Northlight', 'Meridian', 'Lumen', 'Foundry', 'Kestrel'];
const VENDOR_SUFFIXES = ['Works Ltd', 'FX', 'Post', 'Costumiers', 'Studios', 'Digital', 'Sound', 'Labs'];

export function organisationName(i: number): string {
  const word = nth(VENDOR_WORDS, i);
  const suffix = nth(VENDOR_SUFFIXES, Math.floor(i / VENDOR_WORDS.length));
  const round = Math.floor(i / (VENDOR_WORDS.length * VENDOR_SUFFIXES.length));
  return round === 0 ? `${word} ${suffix}` : `${word} ${suffix} ${round + 1}`;
}

export function* episodes(plan: Plan, tally: Tally): Generator<Item<'episodes'>> {
  for (let i = 0; i < plan.counts.episodes; i++) {
    tally.episodes++;
    yield { ref: ref.episode(i), code: `2${String(i + 1).padStart(2, '0')}`, title: `Episode ${i + 1}` };
  }
}

export function* organisations(plan: Plan, tally: Tally): Generator<Item<'organisations'>> {
  for (let i = 0; i < plan.counts.organisations; i++) {
    tally.organisations++;
    yield { ref: ref.organisation(i), name: organisationName(i) };
  }
}

export function* departments(_plan: Plan, tally: Tally): Generator<Item<'departments'>> {
  for (const [i, d] of DEPARTMENTS.entries()) {
    tally.departments++;
    yield {
      slug: d.slug,
      name: d.name,
      cluster: d.cluster,
      phases: ['prep', 'production', 'post'].slice(0, 1 + (i % 3)),
      mission: `Keep ${d.name.toLowerCase()} on schedule across every block.`,
      key_roles: [`${d.name} HOD`, `${d.name} Coordinator`],
      privacy: i % 4 === 0 ? 'restricted' : 'open',
      unveiled: i % 5 !== 4,
      accounts: [...d.accounts],
      registry: { block_plan: `${1 + (i % 4)} blocks`, office: `Stage ${1 + (i % 6)}` },
    };
  }
}

export function* people(plan: Plan, tally: Tally): Generator<Item<'people'>> {
  const rng = Rng.of(plan.seed, 3);
  for (let i = 0; i < plan.counts.people; i++) {
    const d = nth(DEPARTMENTS, i);
    const name = personName(i);
    tally.people++;
    yield {
      ref: ref.person(i),
      name,
      role:
        i < DEPARTMENTS.length
          ? `${d.name} HOD`
          : `${d.name} ${rng.pick(['Assistant', 'Coordinator', 'Artist', 'Trainee'])}`,
      department: d.slug,
      is_hod: i < DEPARTMENTS.length,
      is_admin: i === 0,
      email: `${name.toLowerCase().replace(/[^a-z0-9]+/g, '.')}.${i + 1}@example.com`,
      ...(rng.chance(0.5) ? { phone: `+44 141 496 0${String(i % 1000).padStart(3, '0')}` } : {}),
    };
  }
}

const REVISION_COLORS = ['white', 'white', 'blue', 'pink', 'yellow', 'green'];

/** The scenes, in script order, episode by episode, each with the assets it uses. */
export function* scenes(plan: Plan, tally: Tally): Generator<Item<'scenes'>> {
  const rng = Rng.of(plan.seed, 4);
  const { size, start } = plan;
  const mainCast = Math.min(20, size.character);
  for (let i = 0; i < plan.counts.scenes; i++) {
    const episode = episodeOfScene(plan, i);
    const uses = new Set<number>();
    const castCount = rng.int(2, Math.min(6, size.character));
    while (uses.size < castCount) {
      uses.add(
        start.character + (rng.chance(0.6) ? rng.int(0, mainCast - 1) : rng.int(0, size.character - 1)),
      );
    }
    const cast = [...uses];
    const location = start.location + rng.int(0, size.location - 1);
    uses.add(location);
    if (rng.chance(0.5)) uses.add(start.set + rng.int(0, size.set - 1));
    // one scene in a hundred is a set piece that uses forty assets
    const propCount = rng.chance(0.01) ? 40 - uses.size : rng.int(2, 10);
    const props: number[] = [];
    for (const p of rng.distinct(propCount, 0, size.prop - 1)) {
      uses.add(start.prop + p);
      props.push(start.prop + p);
    }
    const vehicles: number[] = [];
    if (rng.chance(0.2)) {
      const v = start.vehicle + rng.int(0, size.vehicle - 1);
      uses.add(v);
      vehicles.push(v);
    }
    if (rng.chance(0.3)) {
      for (const o of rng.distinct(rng.int(1, 2), 0, size.other - 1)) uses.add(start.other + o);
    }
    const label = (a: number) =>
      assetLabel(kindOf(plan, a), a - start[kindOf(plan, a)], COSTUMES_PER_CHARACTER);
    const sceneInEpisode = i - Math.ceil((episode * plan.counts.scenes) / plan.counts.episodes);
    const progress = episode / plan.counts.episodes;
    tally.scenes++;
    tally.usesEdges += uses.size;
    yield {
      ref: ref.scene(i),
      number: `${sceneInEpisode + 1}${rng.chance(0.05) ? 'A' : ''}`,
      slugline: `${rng.chance(0.7) ? 'INT.' : 'EXT.'} ${placeName(location - start.location)} - ${rng.pick(TIMES_OF_DAY)}`,
      synopsis: `${label(nth(cast, 0))} and ${label(cast[1] ?? nth(cast, 0))} at the ${label(location).toLowerCase()}.`,
      status: rng.chance(0.02)
        ? 'omitted'
        : progress < 0.4
          ? 'done'
          : progress < 0.6
            ? rng.pick(['active', 'blocked', 'done'] as const)
            : 'planned',
      revision_color: rng.pick(REVISION_COLORS),
      episode: ref.episode(episode),
      elements: {
        cast: cast.map(label),
        props: props.map(label),
        ...(vehicles.length ? { vehicles: vehicles.map(label) } : {}),
      },
      assets: [...uses].map(ref.asset),
    };
  }
}

const NOTES = [
  'First pass',
  'Tightened the silhouette',
  'Director asked for a darker read',
  'Matches the set',
  'On-set still',
];

/** Every asset with its versions (a fifth released); costumes carry their ingredients. */
export function* assets(plan: Plan, tally: Tally): Generator<Item<'assets'>> {
  const rng = Rng.of(plan.seed, 5);
  const { counts } = plan;
  let minute = 0;
  for (let a = 0; a < counts.assets; a++) {
    const kind = kindOf(plan, a);
    const i = a - plan.start[kind];
    const versions: NonNullable<Item<'assets'>['versions']> = [];
    for (let n = 1; n <= versionCountOf(plan, a); n++) {
      minute += rng.int(1, 30);
      const released = rng.chance(RELEASED_SHARE);
      const variant = rng.weighted([
        ['Main', 85],
        ['Alt', 10],
        ['On-Set', 5],
      ] as const);
      const ingredients =
        kind === 'costume'
          ? Array.from({ length: rng.int(0, 4) }, (_, k) => {
              const relation = rng.pick(RELATIONS);
              return {
                kind: nth(INGREDIENT_KINDS, k),
                label: `${rng.pick(FABRICS)}${k > 0 ? ` ${k + 1}` : ''}`,
                ...(relation ? { relation } : {}),
              };
            })
          : [];
      tally.versions++;
      if (released) tally.releasedVersions++;
      tally.ingredients += ingredients.length;
      versions.push({
        ref: ref.version(a, n),
        version: n,
        ...(variant === 'Main' ? {} : { variant }),
        status: released
          ? 'approved'
          : rng.weighted([
              ['wip', 50],
              ['review', 35],
              ['rejected', 15],
            ] as const),
        released,
        ...(rng.chance(0.3) ? { note: rng.pick(NOTES) } : {}),
        created_by: rng.chance(0.7)
          ? ref.person(rng.int(0, counts.people - 1))
          : organisationName(rng.int(0, 7)),
        created_at: timeAt(minute % 400_000),
        ...(n < versionCountOf(plan, a) - 3 && rng.chance(0.2) ? { archived: true } : {}),
        ...(ingredients.length ? { ingredients } : {}),
      });
    }
    const costumes =
      kind === 'character'
        ? Array.from({ length: COSTUMES_PER_CHARACTER }, (_, k) =>
            ref.asset(plan.start.costume + i * COSTUMES_PER_CHARACTER + k),
          )
        : [];
    tally.assets++;
    tally.wearsEdges += costumes.length;
    yield {
      ref: ref.asset(a),
      label: assetLabel(kind, i, COSTUMES_PER_CHARACTER),
      kind: assetKindName(kind, i),
      department: departmentOf(kind, i),
      status: rng.weighted([
        ['planned', 20],
        ['active', 45],
        ['blocked', 5],
        ['done', 30],
      ] as const),
      ...(costumes.length ? { costumes } : {}),
      versions,
    };
  }
}
