import { idOf, same, type Id } from '../sync/cells.js';
import { occurrenceKeys, withOccurrenceKeys, type SyncContext } from '../sync/context.js';
import { zip } from '../../util/zip.js';
import { diffKeyed, madeUpKeys, type KeyedDiff } from '../sync/keyed.js';
import { insertRows } from '../sync/write.js';
import {
  APPROVAL_COLUMNS,
  approvalKey,
  approvalRow,
  DEPARTMENT_NOTE_COLUMNS,
  departmentNoteKey,
  departmentNoteRow,
  stepsOf,
  type Step,
} from '../tables/approvals.js';

/*
 * Approvals (by ref, or by title when they have none), their steps, and department notes.
 * An approval the API has decided (a step carries a decision time) keeps its chain as the API
 * left it: mode, status, current step, subject and steps stand; its title, due date and
 * department still follow the document. One that left the document is kept when the API
 * decided it and deleted otherwise.
 */

const API_OWNED = ['mode', 'status', 'current_step', 'subject_node_id', 'subject_version_id', 'steps'];

const sameStep = (a: Step, b: Step) =>
  same(a.person_id, b.person_id) &&
  a.decision === b.decision &&
  a.decided_by === b.decided_by &&
  a.note === b.note &&
  a.decided_at === b.decided_at;

export class ApprovalsSection {
  approvals!: KeyedDiff<'approvals'>;
  notes!: KeyedDiff<'department_notes'>;
  /** Approvals the API decided: their chain is the API's. */
  private readonly decided = new Set<number>();
  private readonly stepsWanted = new Map<string, Step[]>();
  private readonly stepIds = new Map<number, number[]>();
  private readonly keptRemoved = new Set<number>();

  async diff(ctx: SyncContext): Promise<void> {
    await this.diffApprovals(ctx);
    await this.diffNotes(ctx);
  }

  /** The stored steps by approval (noting which approvals the API decided, and the step ids). */
  private async readSteps(ctx: SyncContext, pid: number | null): Promise<Map<number, Step[]>> {
    const steps = new Map<number, Step[]>();
    if (pid === null) return steps;
    for (const s of await ctx.db
      .selectFrom('approval_steps')
      .where('production_id', '=', pid)
      .select(['id', 'approval_id', 'person_id', 'decision', 'decided_by', 'note', 'decided_at'])
      .orderBy('approval_id')
      .orderBy('position')
      .execute()) {
      const step = { ...s, person_id: s.person_id ?? -1 };
      const list = steps.get(s.approval_id);
      if (list) list.push(step);
      else steps.set(s.approval_id, [step]);
      const ids = this.stepIds.get(s.approval_id);
      if (ids) ids.push(s.id);
      else this.stepIds.set(s.approval_id, [s.id]);
      if (s.decided_at !== null) this.decided.add(s.approval_id);
    }
    return steps;
  }

  private async diffApprovals(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const stored =
      pid === null
        ? []
        : await ctx.db
            .selectFrom('approvals')
            .where('production_id', '=', pid)
            .select([
              'id',
              'ref',
              'title',
              'mode',
              'status',
              'due',
              'department_id',
              'subject_node_id',
              'subject_version_id',
              'current_step',
            ])
            .orderBy('id')
            .execute();
    const steps = await this.readSteps(ctx, pid);
    const names = new Map((ctx.doc.people ?? []).map((x) => [x.ref, x.name]));
    const doc = ctx.doc.approvals ?? [];
    const storedRows = withOccurrenceKeys(stored, approvalKey).map(([a, key]) => ({
      id: a.id,
      key,
      values: a,
    }));
    const wanted = zip(
      doc,
      madeUpKeys(
        'approval',
        storedRows,
        doc.map((a) => a.ref),
        occurrenceKeys(doc, approvalKey),
      ),
    );
    for (const [a, key] of wanted)
      this.stepsWanted.set(
        key,
        stepsOf(a, (ref) => names.get(ref), ctx),
      );
    this.approvals = diffKeyed(ctx, {
      kind: 'approvals',
      table: 'approvals',
      columns: APPROVAL_COLUMNS,
      stored: storedRows,
      wanted: wanted.map(([a, key]) => ({ key, ref: a.ref ?? null, row: approvalRow(a, ctx) })),
      stands: (s) => (this.decided.has(s.id) ? API_OWNED : []),
      keptReason: 'decided through the API',
      children: (s, w) => {
        const have = steps.get(s.id) ?? [];
        const want = this.stepsWanted.get(w.key) ?? [];
        return have.length === want.length && zip(have, want).every(([x, w]) => sameStep(x, w))
          ? []
          : ['steps'];
      },
      onUpdate: () => ({ updated_at: ctx.now }),
    });
  }

  private async diffNotes(ctx: SyncContext): Promise<void> {
    const pid = ctx.existingProductionId;
    const notes =
      pid === null
        ? []
        : await ctx.db
            .selectFrom('department_notes')
            .where('production_id', '=', pid)
            .select(['id', 'ref', 'department_id', 'node_id', 'summary', 'created_at'])
            .orderBy('id')
            .execute();
    const docNotes = ctx.doc.department_notes ?? [];
    const storedNotes = withOccurrenceKeys(notes, departmentNoteKey).map(([n, key]) => ({
      id: n.id,
      key,
      values: n,
    }));
    const wantedNoteKeys = madeUpKeys(
      'note',
      storedNotes,
      docNotes.map((n) => n.ref),
      occurrenceKeys(docNotes, departmentNoteKey),
    );
    this.notes = diffKeyed(ctx, {
      kind: 'department_notes',
      table: 'department_notes',
      columns: DEPARTMENT_NOTE_COLUMNS,
      stored: storedNotes,
      wanted: zip(docNotes, wantedNoteKeys).map(([n, key]) => ({
        key,
        ref: n.ref ?? null,
        row: departmentNoteRow(n, ctx),
      })),
    });
  }

  settle(ctx: SyncContext): void {
    for (const r of this.approvals.removed) {
      if (this.decided.has(r.id)) {
        this.keptRemoved.add(r.id);
        ctx.record('approvals', 'kept', r.key, r.id, { reason: 'decided through the API' });
      } else {
        this.approvals.deletes.push(r.id);
        ctx.record('approvals', 'deleted', r.key, r.id);
      }
    }
    for (const r of this.notes.removed) {
      this.notes.deletes.push(r.id);
      ctx.record('department_notes', 'deleted', r.key, r.id);
    }
  }

  /** Stored approval rows (and step rows) whose references this sync rewrites or deletes. */
  keptRows(): { subjectNotKept: Set<number>; departmentNotKept: Set<number>; stepsNotKept: Set<number> } {
    const matched = [...this.approvals.matched.values()];
    const subjectNotKept = new Set([
      ...matched.filter((id) => !this.decided.has(id)),
      ...this.approvals.deletes,
    ]);
    const departmentNotKept = new Set([...matched, ...this.approvals.deletes]);
    const stepsNotKept = new Set<number>();
    for (const [approval, ids] of this.stepIds) {
      if (!this.decided.has(approval)) for (const id of ids) stepsNotKept.add(id);
    }
    return { subjectNotKept, departmentNotKept, stepsNotKept };
  }

  async remove(ctx: SyncContext): Promise<void> {
    await this.notes.deleteRemoved(ctx);
    await this.approvals.deleteRemoved(ctx);
  }

  async write(ctx: SyncContext): Promise<void> {
    await this.approvals.write(ctx);
    const rewrite = this.approvals.updates.filter((u) => u.children.includes('steps')).map((u) => u.id);
    for (let i = 0; i < rewrite.length; i += 1000) {
      await ctx.db
        .deleteFrom('approval_steps')
        .where('approval_id', 'in', rewrite.slice(i, i + 1000))
        .execute();
    }
    const pid = idOf(ctx.productionId);
    const chains: Array<{ id: Id; key: string }> = [
      ...this.approvals.creates.map((c) => ({ id: c.pending, key: c.key })),
      ...this.approvals.updates
        .filter((u) => u.children.includes('steps'))
        .map((u) => ({ id: u.id, key: u.key })),
    ];
    await insertRows(
      ctx.db,
      'approval_steps',
      chains.flatMap(({ id, key }) =>
        (this.stepsWanted.get(key) ?? []).map((s, position) => ({
          production_id: pid,
          approval_id: idOf(id),
          position,
          person_id: idOf(s.person_id),
          decision: s.decision,
          decided_by: s.decided_by,
          note: s.note,
          decided_at: s.decided_at,
        })),
      ),
    );
    await this.notes.write(ctx);
  }
}
