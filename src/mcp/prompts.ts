import type { GetPromptResult, PromptArgument } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { APPROVAL_STATUSES } from '../domain/vocabulary.js';
import { isAppError } from '../errors.js';
import { allApprovals } from '../modules/approvals/service.js';
import type { ApprovalChain } from '../modules/approvals/schemas.js';
import { sceneBundle } from '../modules/bundles/service.js';
import { allDeliveries } from '../modules/deliveries/service.js';
import { allScenes } from '../modules/scenes/service.js';
import { listSchedule } from '../modules/schedule/service.js';
import { allTurnovers } from '../modules/turnovers/service.js';
import { groupBy } from '../util/group-by.js';
import { INVALID_PARAMS, RpcError } from './outcome.js';

export interface PromptSpec {
  name: string;
  title: string;
  description: string;
  arguments: PromptArgument[];
  /**
   * The REST routes whose answers the prompt reads, for a production-wide and for an
   * engagement-bound caller. Their auth is checked before any data is fetched.
   */
  reads: { production: string[]; engagement: string[] };
  render(ctx: AppContext, principal: Principal, args: Record<string, string>): Promise<GetPromptResult>;
}

const invalid = (message: string) => new RpcError(INVALID_PARAMS, message);

/** A node or row id given as a prompt argument (prompt arguments are always strings). */
function idArgument(args: Record<string, string>, name: string): number {
  const raw = (args[name] ?? '').trim();
  const n = /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : NaN;
  if (!(n <= 2147483647)) throw invalid(`${name}: must be a positive integer id, got "${args[name]}"`);
  return n;
}

/** The service's "not found" for an argument, said in the argument's words. */
async function reaching<T>(work: Promise<T>, what: string): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (isAppError(err) && err.status === 404) throw invalid(`${what} is unknown or out of this key's reach`);
    throw err;
  }
}

/** A free-form spec entry in words: `format: EXR, colour: ACEScg`. */
const specLine = (entry: unknown): string =>
  entry !== null && typeof entry === 'object'
    ? Object.entries(entry)
        .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join(', ')
    : JSON.stringify(entry);

const json = (value: unknown) => '```json\n' + JSON.stringify(value) + '\n```';
const today = () => new Date().toISOString().slice(0, 10);

function userText(description: string, lines: string[]): GetPromptResult {
  return { description, messages: [{ role: 'user', content: { type: 'text', text: lines.join('\n') } }] };
}

const sceneBriefing: PromptSpec = {
  name: 'scene_briefing',
  title: 'Scene briefing',
  description:
    'Brief the crew on one scene: what is ready, what is still pending and what to chase before it shoots.',
  arguments: [{ name: 'scene_id', description: "The scene's node_id (see list_scenes)", required: true }],
  reads: { production: ['GET /bundles/scene/:node_id'], engagement: ['GET /bundles/scene/:node_id'] },
  async render(ctx, principal, args) {
    const id = idArgument(args, 'scene_id');
    const b = await reaching(sceneBundle(ctx, principal, id), `scene_id: scene ${id}`);
    const ready = b.assets.flatMap((a) => {
      const newest = a.released_versions.at(-1);
      return newest ? [{ ...a, newest }] : [];
    });
    const waiting = b.assets.filter((a) => a.released_versions.length === 0);
    const open = b.approvals.filter((a) => a.status === 'pending');
    const s = b.scene;
    return userText(`Briefing for scene ${s.number}`, [
      `Brief me on scene ${s.number}, ${s.slugline} (node ${s.node_id}, status ${s.status}, revision ${s.revision_color}).`,
      `Synopsis: ${s.synopsis || '(none)'}`,
      '',
      `Ready, with a released version (${ready.length}):`,
      ...ready.map(
        ({ newest: v, ...a }) =>
          `- ${a.label} (${a.kind}, node ${a.node_id}): v${v.version} ${v.variant}${v.media_path ? `, media ${v.media_path}` : ''}`,
      ),
      `Pending, nothing released yet (${waiting.length}):`,
      ...waiting.map((a) => `- ${a.label} (${a.kind}, node ${a.node_id}), status ${a.status}`),
      `Open approvals (${open.length}):`,
      ...open.map((a) => `- ${a.title} (${a.mode}), due ${a.due ?? 'undated'}`),
      `Shoot days (${b.shoot_days.length}):`,
      ...b.shoot_days.map(
        (d) => `- Day ${d.day_number}, ${d.date}, call ${d.general_call ?? 'not set'}, ${d.status}`,
      ),
      `Department notes (${b.department_notes.length}):`,
      ...b.department_notes.map((n) => `- ${n.summary}`),
      '',
      `Today is ${today()}. Write a short briefing: what is ready to shoot, what is still pending and what it waits on, and what must be chased before the first shoot day. Use only this data; the full scene bundle follows.`,
      json(b),
    ]);
  },
};

const turnoverChecklist: PromptSpec = {
  name: 'turnover_checklist',
  title: 'Turnover checklist',
  description: 'A checklist for one delivery: every spec entry to satisfy, the due date and what gates it.',
  arguments: [
    {
      name: 'delivery_id',
      description: 'The delivery id (list_turnovers for a vendor key, list_deliveries otherwise)',
      required: true,
    },
  ],
  reads: { production: ['GET /deliveries'], engagement: ['GET /turnovers'] },
  async render(ctx, principal, args) {
    const id = idArgument(args, 'delivery_id');
    const outOfReach = () => invalid(`delivery_id: delivery ${id} is unknown or out of this key's reach`);
    let d: { id: number; title: string; status: string; due?: string | null; spec: unknown[] };
    let gate: string;
    if (principal.engagementId !== null) {
      const row = (await allTurnovers(ctx, principal)).find((r) => r.id === id);
      if (!row) throw outOfReach();
      d = row;
      gate = row.can_submit
        ? 'This engagement may submit (the submit_turnover tool).'
        : 'This engagement may read it but not submit.';
    } else {
      const row = (await allDeliveries(ctx, principal)).find((r) => r.id === id);
      if (!row) throw outOfReach();
      d = row;
      gate = row.gating_approval
        ? `Gated by approval "${row.gating_approval.title}" (${row.gating_approval.status}).`
        : 'No gating approval.';
    }
    return userText(`Checklist for "${d.title}"`, [
      `Prepare the turnover checklist for "${d.title}" (delivery ${d.id}), status ${d.status}, due ${d.due ?? 'undated'}.`,
      gate,
      `Spec entries (${d.spec.length}), each to be met before submitting:`,
      ...d.spec.map((entry) => `- [ ] ${specLine(entry)}`),
      '',
      `Today is ${today()}. Write a checklist the vendor can tick off: one line per spec entry in plain words, then the deadline and anything that blocks sending. Use only this data; the delivery record follows.`,
      json(d),
    ]);
  },
};

const callSheet: PromptSpec = {
  name: 'call_sheet',
  title: 'Shoot-day call sheet',
  description:
    'Draft a call sheet for one shoot day: its scenes in shooting order with synopsis, cast and elements.',
  arguments: [{ name: 'day_number', description: 'The shoot day number (see get_schedule)', required: true }],
  reads: { production: ['GET /schedule', 'GET /scenes'], engagement: ['GET /schedule', 'GET /scenes'] },
  async render(ctx, principal, args) {
    const n = idArgument(args, 'day_number');
    const [days, scenes] = await Promise.all([listSchedule(ctx, principal), allScenes(ctx, principal)]);
    const day = days.find((d) => d.day_number === n);
    if (!day) {
      const [first] = days;
      const last = days.at(-1);
      const range = first && last ? `days run ${first.day_number}–${last.day_number}` : 'no days';
      throw invalid(`day_number: no shoot day ${n} (${range})`);
    }
    const byId = new Map(scenes.map((s) => [s.node_id, s]));
    const strips = day.scenes.flatMap((strip) => byId.get(strip.node_id) ?? []);
    return userText(`Call sheet for day ${day.day_number}`, [
      `Draft the call sheet for shoot day ${day.day_number} on ${day.date}: general call ${day.general_call ?? 'not set'}, status ${day.status}.`,
      `Scenes in shooting order (${strips.length}):`,
      ...strips.map((s) => {
        const elements = Object.entries(s.elements)
          .map(([kind, names]) => `${kind}: ${names.join(', ')}`)
          .join('; ');
        return `- Scene ${s.number}, ${s.slugline} (${s.status}). ${s.synopsis}${elements ? ` [${elements}]` : ''}`;
      }),
      '',
      'Lay it out as a call sheet: the day header, then each scene with its cast and elements, and a list of everyone called. Use only this data; the schedule row and its scenes follow.',
      json({ day, scenes: strips }),
    ]);
  },
};

const approvalsDigest: PromptSpec = {
  name: 'approvals_digest',
  title: 'Approvals digest',
  description: 'A digest of approvals by department: what waits on whom, what is overdue or due soon.',
  arguments: [
    {
      name: 'status',
      description: `One of ${APPROVAL_STATUSES.join(', ')}; default pending`,
      required: false,
    },
  ],
  reads: { production: ['GET /approvals'], engagement: ['GET /approvals'] },
  async render(ctx, principal, args) {
    const status = (args.status?.trim() || 'pending') as ApprovalChain['status'];
    if (!APPROVAL_STATUSES.includes(status)) {
      throw invalid(`status: must be one of ${APPROVAL_STATUSES.join(', ')}`);
    }
    const chains = await allApprovals(ctx, principal, status);
    const byDepartment = groupBy(chains, (c) => c.department ?? '(no department)');
    const line = (c: ApprovalChain) => {
      const step = c.steps.find((s) => s.current);
      const subject = c.subject
        ? ` on ${c.subject.label}${c.subject.version !== null ? ` v${c.subject.version}` : ''}`
        : '';
      const waiting = step
        ? `, waiting on ${step.person_name ?? 'an unnamed step'}${step.role ? ` (${step.role})` : ''}`
        : '';
      return `- ${c.title}${subject} (${c.mode}), due ${c.due ?? 'undated'}${waiting}`;
    };
    return userText(`Approvals digest (${status})`, [
      `Digest of the ${chains.length} ${status} approval(s), by department:`,
      ...[...byDepartment].flatMap(([department, rows]) => [`${department}:`, ...rows.map(line)]),
      '',
      `Today is ${today()}. Write a digest for the production coordinator: overdue and due-soon items first, whose desk each is on, and what to chase today. Use only this data; the approval chains follow.`,
      json(chains),
    ]);
  },
};

/** The four prompts; each embeds live data fetched under the caller's clamp. */
export const PROMPTS: readonly PromptSpec[] = [sceneBriefing, turnoverChecklist, callSheet, approvalsDigest];
