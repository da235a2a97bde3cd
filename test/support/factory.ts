import { createHash } from 'node:crypto';
import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../../src/db/index.js';
import type { Database } from '../../src/db/schema.js';
import type { Scope } from '../../src/domain/vocabulary.js';
import { mintKeyById } from '../../src/auth/key-service.js';

/*
 * Row factories for module tests: each inserts one row with plausible defaults straight into the
 * tables, and returns it as stored. A test states only the values it asserts on, and its fixture
 * does not go through the document importer, so a bug there breaks the importer's own tests,
 * not every module's. Timestamps default to one fixed instant (`AT`), so answers are stable.
 */

export const AT = '2026-03-01T10:00:00.000Z';

type Table = keyof Database;
type Row<T extends Table> = Selectable<Database[T]>;
/** What a factory takes: any column, the owning production given separately. */
type Values<T extends Table> = Partial<Insertable<Database[T]>>;

export class Factory {
  private n = 0;

  constructor(readonly db: Db) {}

  /** A fresh suffix, so unique columns (codes, slugs, storage keys) never collide within a file. */
  private next(): number {
    return ++this.n;
  }

  private async insert<T extends Table>(table: T, row: Record<string, unknown>): Promise<Row<T>> {
    // one generic insert for every table: Kysely cannot type `insertInto(T)` over a union of tables
    const got: unknown = await this.db
      .insertInto(table)
      .values(row as never)
      .returningAll()
      .executeTakeFirstOrThrow();
    return got as Row<T>;
  }

  production(values: Values<'productions'> = {}): Promise<Row<'productions'>> {
    const code = values.code ?? `prod${this.next()}`;
    return this.insert('productions', {
      code,
      title: `Test ${code}`,
      logline: 'A test production.',
      status: 'active',
      phase: 'production',
      accent: 'teal',
      format: 'single',
      filespace: `${code}-fs`,
      created_at: AT,
      ...values,
    });
  }

  episode(productionId: number, values: Values<'episodes'> = {}): Promise<Row<'episodes'>> {
    const n = this.next();
    return this.insert('episodes', {
      production_id: productionId,
      ref: null,
      code: `${100 + n}`,
      title: `Episode ${n}`,
      position: n,
      ...values,
    });
  }

  organisation(productionId: number, values: Values<'organisations'> = {}): Promise<Row<'organisations'>> {
    return this.insert('organisations', {
      production_id: productionId,
      ref: null,
      name: `Vendor ${this.next()}`,
      ...values,
    });
  }

  /** A department; `accounts` adds its cost accounts (department_accounts). */
  async department(
    productionId: number,
    values: Values<'departments'> & { accounts?: string[] } = {},
  ): Promise<Row<'departments'>> {
    const { accounts = [], ...rest } = values;
    const n = this.next();
    const row = await this.insert('departments', {
      production_id: productionId,
      slug: `dept${n}`,
      name: `Department ${n}`,
      cluster: '',
      phases: '[]',
      mission: '',
      key_roles: '[]',
      privacy: 'open',
      unveiled: 1,
      registry: '{}',
      position: n,
      updated_at: AT,
      ...rest,
    });
    for (const account of accounts) {
      await this.insert('department_accounts', {
        production_id: productionId,
        department_id: row.id,
        account,
      });
    }
    return row;
  }

  person(productionId: number, values: Values<'people'> = {}): Promise<Row<'people'>> {
    const n = this.next();
    return this.insert('people', {
      production_id: productionId,
      ref: null,
      name: `Person ${n}`,
      role: '',
      department_id: null,
      is_hod: 0,
      is_admin: 0,
      email: null,
      phone: null,
      position: n,
      updated_at: AT,
      ...values,
    });
  }

  /** An asset node (a prop unless `kind` says otherwise). */
  asset(productionId: number, values: Values<'nodes'> = {}): Promise<Row<'nodes'>> {
    const n = this.next();
    return this.insert('nodes', {
      production_id: productionId,
      ref: null,
      kind: 'prop',
      label: `Asset ${n}`,
      status: 'active',
      department_id: null,
      position: n,
      created_at: AT,
      updated_at: AT,
      ...values,
    });
  }

  /** A scene node; `uses` links the assets it uses, in that order. */
  async scene(
    productionId: number,
    values: Values<'nodes'> & { uses?: number[] } = {},
  ): Promise<Row<'nodes'>> {
    const { uses = [], ...rest } = values;
    const n = this.next();
    const scene = await this.asset(productionId, {
      kind: 'scene',
      label: `Scene ${n}`,
      status: 'planned',
      number: String(n),
      slugline: `INT. ROOM ${n} - DAY`,
      synopsis: '',
      revision_color: 'white',
      elements: '{}',
      ...rest,
    });
    for (const [i, asset] of uses.entries()) await this.edge(productionId, scene.id, asset, 'uses', i);
    return scene;
  }

  edge(
    productionId: number,
    from: number,
    to: number,
    kind: 'uses' | 'wears',
    position = 0,
  ): Promise<Row<'edges'>> {
    return this.insert('edges', {
      production_id: productionId,
      from_node_id: from,
      to_node_id: to,
      kind,
      position,
    });
  }

  /** A media row (the bytes are the test's business: put them in the store when it reads them). */
  media(productionId: number, values: Values<'media'> = {}): Promise<Row<'media'>> {
    const n = this.next();
    return this.insert('media', {
      production_id: productionId,
      ref: null,
      storage_key: `${productionId}/factory-${n}.png`,
      kind: 'image',
      label: `Media ${n}`,
      content_type: 'image/png',
      size: 8,
      sha256: createHash('sha256').update(`media ${n}`).digest('hex'),
      node_id: null,
      delivery_id: null,
      work_item_id: null,
      uploader_engagement_id: null,
      created_by: null,
      created_at: AT,
      updated_at: AT,
      ...values,
    });
  }

  version(productionId: number, nodeId: number, values: Values<'versions'> = {}): Promise<Row<'versions'>> {
    return this.insert('versions', {
      production_id: productionId,
      ref: null,
      node_id: nodeId,
      version: 1,
      variant: 'Main',
      status: 'wip',
      released: 0,
      archived: 0,
      note: null,
      media_id: null,
      created_by: null,
      created_by_person_id: null,
      created_at: AT,
      updated_at: AT,
      ...values,
    });
  }

  /** An approval with one step per person in `steps`, in that order. */
  async approval(
    productionId: number,
    values: Values<'approvals'> & { steps?: number[] } = {},
  ): Promise<Row<'approvals'>> {
    const { steps = [], ...rest } = values;
    const approval = await this.insert('approvals', {
      production_id: productionId,
      ref: null,
      title: `Approval ${this.next()}`,
      mode: 'chain',
      status: 'pending',
      due: null,
      department_id: null,
      subject_node_id: null,
      subject_version_id: null,
      current_step: 0,
      created_at: AT,
      updated_at: AT,
      ...rest,
    });
    for (const [position, personId] of steps.entries()) {
      await this.insert('approval_steps', {
        production_id: productionId,
        approval_id: approval.id,
        position,
        person_id: personId,
      });
    }
    return approval;
  }

  delivery(productionId: number, values: Values<'deliveries'> = {}): Promise<Row<'deliveries'>> {
    const n = this.next();
    return this.insert('deliveries', {
      production_id: productionId,
      ref: null,
      title: `Delivery ${n}`,
      kind: 'external',
      status: 'draft',
      due: null,
      from_department_id: null,
      to_department_id: null,
      external_to: null,
      spec: '[]',
      sent_at: null,
      gating_approval_id: null,
      position: n,
      updated_at: AT,
      ...values,
    });
  }

  /** An engagement of an organisation; `departments` seats it in them. */
  async engagement(
    productionId: number,
    organisationId: number,
    values: Values<'engagements'> & { departments?: number[] } = {},
  ): Promise<Row<'engagements'>> {
    const { departments = [], ...rest } = values;
    const engagement = await this.insert('engagements', {
      production_id: productionId,
      ref: `eng${this.next()}`,
      organisation_id: organisationId,
      created_at: AT,
      updated_at: AT,
      ...rest,
    });
    for (const departmentId of departments) {
      await this.insert('engagement_departments', {
        engagement_id: engagement.id,
        department_id: departmentId,
      });
    }
    return engagement;
  }

  grant(
    productionId: number,
    engagementId: number,
    values: Values<'grants'> & Pick<Insertable<Database['grants']>, 'kind'>,
  ): Promise<Row<'grants'>> {
    return this.insert('grants', {
      production_id: productionId,
      engagement_id: engagementId,
      node_id: null,
      delivery_id: null,
      access: null,
      expires_at: null,
      revoked_at: null,
      created_at: AT,
      updated_at: AT,
      ...values,
    });
  }

  purchaseOrder(
    productionId: number,
    values: Values<'purchase_orders'> = {},
  ): Promise<Row<'purchase_orders'>> {
    return this.insert('purchase_orders', {
      production_id: productionId,
      ref: null,
      vendor_organisation_id: null,
      department_id: null,
      account: '1000',
      description: `Order ${this.next()}`,
      amount: 100,
      status: 'open',
      date: '2026-03-02',
      updated_at: AT,
      ...values,
    });
  }

  /** A weekly cost report with its lines, in order. */
  async costReport(
    productionId: number,
    values: Values<'cost_reports'> & { lines?: Array<Values<'cost_report_lines'>> } = {},
  ): Promise<Row<'cost_reports'>> {
    const { lines = [], ...rest } = values;
    const report = await this.insert('cost_reports', {
      production_id: productionId,
      week_of: '2026-03-02',
      active: 1,
      ...rest,
    });
    for (const [position, line] of lines.entries()) {
      await this.insert('cost_report_lines', {
        production_id: productionId,
        cost_report_id: report.id,
        account: '1000',
        description: null,
        budget: null,
        actual: null,
        committed: null,
        position,
        ...line,
      });
    }
    return report;
  }

  /** A shoot day with its strips: the scenes shot that day, in order. */
  async shootDay(
    productionId: number,
    values: Values<'shoot_days'> & { scenes?: number[] } = {},
  ): Promise<Row<'shoot_days'>> {
    const { scenes = [], ...rest } = values;
    const n = this.next();
    const day = await this.insert('shoot_days', {
      production_id: productionId,
      ref: null,
      day_number: n,
      date: '2026-04-01',
      general_call: null,
      status: 'scheduled',
      updated_at: AT,
      ...rest,
    });
    for (const [position, sceneId] of scenes.entries()) {
      await this.insert('shoot_strips', {
        production_id: productionId,
        shoot_day_id: day.id,
        scene_node_id: sceneId,
        position,
      });
    }
    return day;
  }

  /** A live file of the production's storage library. */
  libraryFile(productionId: number, values: Values<'library_files'> = {}): Promise<Row<'library_files'>> {
    return this.insert('library_files', {
      production_id: productionId,
      path: `files/f${this.next()}.exr`,
      size: 1024,
      detected_at: AT,
      updated_at: AT,
      retired_at: null,
      proxy_media_id: null,
      ...values,
    });
  }

  /** A key's token (production-wide unless it names an engagement), minted as the CLI mints it. */
  async key(
    productionId: number,
    options: { scopes?: Scope[]; engagementId?: number; personId?: number; label?: string } = {},
  ): Promise<string> {
    const key = await mintKeyById(this.db, {
      productionId,
      label: options.label ?? 'test key',
      ...(options.scopes ? { scopes: options.scopes } : {}),
      engagementId: options.engagementId ?? null,
      personId: options.personId ?? null,
    });
    return key.token;
  }
}
