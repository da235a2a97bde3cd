import { organisationName } from './breakdown.js';
import { DEPARTMENTS, departmentOf, VENDOR_DEPARTMENTS } from './departments.js';
import { assetLabel, SPEC_FORMATS } from './names.js';
import {
  COSTUMES_PER_CHARACTER,
  dateAt,
  kindOf,
  ref,
  scenesOfEpisode,
  STRIPS_PER_DAY,
  timeAt,
  versionCountOf,
  type Plan,
} from './plan.js';
import { nth, Rng } from './random.js';
import { emptyTally, type Item, type Tally } from './tally.js';

/** The running of the show: the shoot schedule, approvals, notes, deliveries and vendor engagements. */

/** Shoot days are skipped at weekends: day d of the shoot falls on this calendar offset. */
const shootDate = (d: number) => dateAt(Math.floor(d / 5) * 7 + (d % 5));

/** The shoot: episodes are shot in order, each day striping scenes of the episode in hand. */
export function* shootDays(plan: Plan, tally: Tally): Generator<Item<'shoot_days'>> {
  const rng = Rng.of(plan.seed, 6);
  const { shootDays: days, episodes } = plan.counts;
  for (let d = 0; d < days; d++) {
    const episode = Math.min(episodes - 1, Math.floor((d * episodes) / days));
    const [from, to] = scenesOfEpisode(plan, episode);
    const strips = rng.distinct(STRIPS_PER_DAY, from, to - 1).map(ref.scene);
    const progress = d / days;
    tally.shootDays++;
    tally.strips += strips.length;
    yield {
      ref: ref.day(d),
      day_number: d + 1,
      date: shootDate(d),
      general_call: rng.pick(['06:00', '07:00', '07:30', '08:00', '16:00', '18:00']),
      status:
        progress < 0.45
          ? rng.weighted([
              ['shot', 95],
              ['moved', 5],
            ] as const)
          : 'scheduled',
      scenes: strips,
    };
  }
}

const departmentIndex = (slug: string) => DEPARTMENTS.findIndex((d) => d.slug === slug);

export function* approvals(plan: Plan, tally: Tally): Generator<Item<'approvals'>> {
  const rng = Rng.of(plan.seed, 7);
  const { counts } = plan;
  for (let i = 0; i < counts.approvals; i++) {
    const chain = rng.chance(0.6);
    const steps = rng.distinct(chain ? rng.int(2, 4) : 1, 0, counts.people - 1).map(ref.person);
    const status = rng.weighted([
      ['pending', 40],
      ['approved', 40],
      ['changes_requested', 15],
      ['rejected', 5],
    ] as const);
    const currentStep =
      status === 'approved' ? steps.length - 1 : status === 'pending' ? rng.int(0, steps.length - 1) : 0;
    const roll = rng.int(0, 9);
    let subject: Item<'approvals'>['subject'] = null;
    let department: string = rng.pick(DEPARTMENTS).slug;
    let title = `Sign-off ${i + 1}`;
    if (roll < 6) {
      const a = rng.int(0, counts.assets - 1);
      const n = rng.int(1, versionCountOf(plan, a));
      const kind = kindOf(plan, a);
      department = departmentOf(kind, a - plan.start[kind]);
      title = `${assetLabel(kind, a - plan.start[kind], COSTUMES_PER_CHARACTER)}, look v${n}`;
      subject = { node: ref.asset(a), version: ref.version(a, n) };
    } else if (roll < 8) {
      const scene = rng.chance(0.5);
      const node = scene
        ? ref.scene(rng.int(0, counts.scenes - 1))
        : ref.asset(rng.int(0, counts.assets - 1));
      title = scene ? `Scene plan ${node}` : `Build ${node}`;
      subject = { node };
    }
    tally.approvals++;
    tally.approvalSteps += steps.length;
    yield {
      ref: ref.approval(i),
      title,
      mode: chain ? 'chain' : 'decision',
      status,
      due: dateAt(rng.int(-30, 200)),
      department,
      ...(subject ? { subject } : {}),
      steps,
      current_step: currentStep,
    };
  }
}

const NOTE_SUMMARIES = [
  'Must read wet in the wide',
  'Continuity: left sleeve torn from scene before',
  'Practical light must be in shot',
  'Hold for director approval',
  'Double needed for the fall',
  'Clear the signage for clearance',
];

export function* departmentNotes(plan: Plan, tally: Tally): Generator<Item<'department_notes'>> {
  const rng = Rng.of(plan.seed, 8);
  const { counts } = plan;
  for (let i = 0; i < counts.departmentNotes; i++) {
    const onScene = rng.chance(0.5);
    tally.departmentNotes++;
    yield {
      ref: ref.note(i),
      department: rng.pick(DEPARTMENTS).slug,
      node: onScene ? ref.scene(rng.int(0, counts.scenes - 1)) : ref.asset(rng.int(0, counts.assets - 1)),
      summary: rng.pick(NOTE_SUMMARIES),
      created_at: timeAt(rng.int(0, 200_000)),
    };
  }
}

/**
 * Engagement 0 is the big vendor: it holds a delivery grant on every twentieth delivery, so
 * those are addressed to its organisation. The others go to the other vendors in turn.
 */
export const vendorOfDelivery = (plan: Plan, d: number): number =>
  d % 20 === 0 ? 0 : 1 + (d % Math.max(1, plan.counts.engagements - 1));

export function* deliveries(plan: Plan, tally: Tally): Generator<Item<'deliveries'>> {
  const rng = Rng.of(plan.seed, 9);
  const { counts } = plan;
  for (let d = 0; d < counts.deliveries; d++) {
    const external = d % 20 === 0 || rng.chance(0.6);
    const from = rng.pick(VENDOR_DEPARTMENTS);
    const spec = rng
      .distinct(rng.int(1, 3), 0, SPEC_FORMATS.length - 1)
      .map((k) => ({ ...nth(SPEC_FORMATS, k) }));
    const status = rng.weighted([
      ['draft', 20],
      ['blocked', 10],
      ['ready', 25],
      ['sent', 25],
      ['accepted', 20],
    ] as const);
    tally.deliveries++;
    yield {
      ref: ref.delivery(d),
      title: `${external ? 'Turnover' : 'Handover'} ${d + 1}: ${from} ${rng.pick(['plates', 'renders', 'stills', 'stems', 'conform', 'looks'])}`,
      kind: external ? 'external' : 'internal',
      status,
      due: dateAt(rng.int(0, 260)),
      from_department: from,
      ...(external
        ? { external_to: organisationName(vendorOfDelivery(plan, d)) }
        : { to_department: rng.pick(DEPARTMENTS).slug }),
      spec,
      sent_at: status === 'sent' || status === 'accepted' ? timeAt(rng.int(0, 200_000)) : null,
      ...(rng.chance(0.1) ? { gating_approval: ref.approval(rng.int(0, counts.approvals - 1)) } : {}),
    };
  }
}

/** Expiries are fixed dates, so a document means the same whenever it is generated. */
const EXPIRED = '2025-06-30T00:00:00Z';
const EXPIRES_LATER = '2099-12-31T00:00:00Z';

/**
 * Vendor engagements. Engagement 0 (e001) is the large one, the vendor whose clamp the
 * benchmarks and the query-plan tests weigh: a scene grant on every tenth scene, a character
 * grant on every twentieth character, a delivery grant on every twentieth delivery and its own
 * purchase orders (501 grants at scale 1, a few revoked or expired). The others hold a
 * handful of grants each.
 */
export function* engagements(plan: Plan, tally: Tally): Generator<Item<'engagements'>> {
  const rng = Rng.of(plan.seed, 10);
  const { counts, start } = plan;
  for (let e = 0; e < counts.engagements; e++) {
    const grants: NonNullable<Item<'engagements'>['grants']> = [];
    // every fiftieth grant is revoked and every fiftieth (offset) has expired: the clamp must drop them
    const lifecycle = (k: number) =>
      k % 50 === 49
        ? { revoked: true }
        : k % 50 === 24
          ? { expires_at: EXPIRED }
          : k % 7 === 3
            ? { expires_at: EXPIRES_LATER }
            : {};
    if (e === 0) {
      for (let s = 0; s < counts.scenes; s += 10)
        grants.push({ kind: 'scene', node: ref.scene(s), ...lifecycle(grants.length) });
      for (let c = 0; c < plan.size.character; c += 20)
        grants.push({ kind: 'character', node: ref.asset(start.character + c) });
      for (let d = 0; d < counts.deliveries; d += 20) {
        grants.push({
          kind: 'delivery',
          delivery: ref.delivery(d),
          access: (d / 20) % 3 === 0 ? 'submit' : 'read',
        });
      }
      grants.push({ kind: 'own_po' });
    } else {
      for (const s of rng.distinct(rng.int(2, 15), 0, counts.scenes - 1))
        grants.push({ kind: 'scene', node: ref.scene(s), ...lifecycle(grants.length) });
      for (const c of rng.distinct(rng.int(0, 5), 0, plan.size.character - 1))
        grants.push({ kind: 'character', node: ref.asset(start.character + c) });
      for (let d = 0; d < counts.deliveries && grants.length < 30; d++) {
        if (d % 20 !== 0 && vendorOfDelivery(plan, d) === e && rng.chance(0.3)) {
          grants.push({
            kind: 'delivery',
            delivery: ref.delivery(d),
            access: rng.pick(['read', 'submit'] as const),
          });
        }
      }
      if (rng.chance(0.5)) grants.push({ kind: 'own_po', ...(rng.chance(0.1) ? { revoked: true } : {}) });
    }
    const departments = rng
      .distinct(rng.int(1, 2), 0, VENDOR_DEPARTMENTS.length - 1)
      .map((k) => nth(VENDOR_DEPARTMENTS, k));
    if (e === 0 && !departments.includes('vfx')) departments[0] = 'vfx';
    tally.engagements++;
    tally.grants += grants.length;
    yield {
      ref: ref.engagement(e),
      organisation: ref.organisation(e),
      departments: [...new Set(departments)].sort((a, b) => departmentIndex(a) - departmentIndex(b)),
      grants,
    };
  }
}

/**
 * Work vendors sent back on the deliveries they may submit on, once those have gone out (sent
 * or accepted), with the production's reviews: one to three passes a delivery, the earlier ones
 * sent back with changes requested; on an accepted delivery the last pass was accepted, on a
 * sent one it waits for review. No files: a generated document names none.
 */
export function* submissions(plan: Plan, tally: Tally): Generator<Item<'submissions'>> {
  const rng = Rng.of(plan.seed, 17);
  const statusOf = new Map([...deliveries(plan, emptyTally())].map((d) => [d.ref, d.status]));
  for (const e of engagements(plan, emptyTally())) {
    for (const g of e.grants ?? []) {
      const status = g.delivery ? statusOf.get(g.delivery) : undefined;
      if (g.access !== 'submit' || (status !== 'sent' && status !== 'accepted')) continue;
      yield* passes(plan, rng, { delivery: g.delivery!, engagement: e.ref }, status, tally);
    }
  }
}

function* passes(
  plan: Plan,
  rng: Rng,
  on: { delivery: string; engagement: string },
  status: 'sent' | 'accepted',
  tally: Tally,
): Generator<Item<'submissions'>> {
  const count = rng.int(1, 3);
  let minutes = rng.int(0, 150_000);
  for (let k = 0; k < count; k++) {
    minutes += rng.int(600, 5_000);
    const created_at = timeAt(minutes);
    const last = k === count - 1;
    const decision = !last ? 'changes_requested' : status === 'accepted' ? 'accepted' : null;
    minutes += rng.int(60, 2_000);
    tally.submissions++;
    if (decision) tally.reviewedSubmissions++;
    yield {
      ...on,
      title: `Pass ${k + 1}`,
      note: rng.pick(['', 'Comp and roto', 'Full CG shots', 'Paint-out only']),
      created_by: 'Vendor pipeline',
      created_at,
      ...(decision
        ? {
            review: {
              decision,
              note: decision === 'accepted' ? 'Approved for the cut' : rng.pick(REVIEW_NOTES),
              reviewed_by: ref.person(rng.int(0, plan.counts.people - 1)),
              reviewed_at: timeAt(minutes),
            },
          }
        : {}),
    };
  }
}

const REVIEW_NOTES = [
  'Edge matte chatters',
  'Grain does not match the plate',
  'Too warm',
  'Track slips at the end',
];
