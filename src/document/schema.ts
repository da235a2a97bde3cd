import { Type, type Static, type TSchema } from 'typebox';
import * as V from '../domain/vocabulary.js';
import { Nullable, StringEnum } from '../domain/schema-kit.js';

/**
 * The production document (docs/production-document.md) as a JSON Schema. Shipped as
 * `prodgraph-document.schema.json` by `prodgraph schema` for editors; the importer validates
 * with it first, then checks what a schema cannot (refs, cross-field rules).
 */

const strict = { additionalProperties: false } as const;
const Text = Type.String();
const NonEmpty = Type.String({ minLength: 1 });
const Ref = Type.String({ minLength: 1, maxLength: 200 });
const RefList = Type.Array(Ref);
const Date_ = Type.String({ format: 'date' });
const Timestamp = Type.String({ format: 'date-time' });
const Opt = <T extends TSchema>(t: T) => Type.Optional(t);
const OptN = <T extends TSchema>(t: T) => Type.Optional(Nullable(t));
const FreeObject = Type.Record(Type.String(), Type.Unknown());
const MediaFile = Type.String({ minLength: 1, description: 'file path relative to the document' });

export const ProductionBlock = Type.Object(
  {
    code: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,62}$', description: 'unique slug, the CLI handle' }),
    title: NonEmpty,
    logline: Opt(Text),
    status: Opt(NonEmpty),
    phase: Opt(NonEmpty),
    accent: Opt(StringEnum(V.ACCENTS)),
    format: Opt(StringEnum(V.PRODUCTION_FORMATS)),
    season_number: OptN(Type.Integer({ minimum: 0 })),
    current_episode: OptN(Ref),
    filespace: OptN(NonEmpty),
  },
  strict,
);

const Episode = Type.Object({ ref: Ref, code: NonEmpty, title: Opt(Text) }, strict);
const Organisation = Type.Object({ ref: Ref, name: NonEmpty }, strict);

const Department = Type.Object(
  {
    slug: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]*$' }),
    name: NonEmpty,
    cluster: Opt(Text),
    phases: Opt(Type.Array(NonEmpty)),
    mission: Opt(Text),
    key_roles: Opt(Type.Array(NonEmpty)),
    privacy: Opt(StringEnum(V.PRIVACIES)),
    unveiled: Opt(Type.Boolean()),
    accounts: Opt(Type.Array(NonEmpty)),
    registry: Opt(FreeObject),
  },
  strict,
);

const Person = Type.Object(
  {
    ref: Ref,
    name: NonEmpty,
    role: Opt(Text),
    department: OptN(Ref),
    is_hod: Opt(Type.Boolean()),
    is_admin: Opt(Type.Boolean()),
    email: OptN(Text),
    phone: OptN(Text),
  },
  strict,
);

const Scene = Type.Object(
  {
    ref: Ref,
    number: NonEmpty,
    slugline: NonEmpty,
    synopsis: Opt(Text),
    status: Opt(StringEnum(V.SCENE_STATUSES)),
    revision_color: Opt(NonEmpty),
    episode: OptN(Ref),
    elements: Opt(Type.Record(Type.String(), Type.Array(Text))),
    assets: Opt(RefList),
  },
  strict,
);

const Ingredient = Type.Object(
  {
    ref: Opt(Ref),
    kind: NonEmpty,
    label: NonEmpty,
    relation: OptN(NonEmpty),
    media: OptN(MediaFile),
  },
  strict,
);

/** A note written on a version (through the API; an export carries them). */
const VersionNote = Type.Object({ text: NonEmpty, author: OptN(Text), created_at: Timestamp }, strict);

const Version = Type.Object(
  {
    ref: Opt(Ref),
    version: Type.Integer({ minimum: 1 }),
    variant: Opt(NonEmpty),
    status: Opt(NonEmpty),
    released: Opt(Type.Boolean()),
    note: OptN(Text),
    media: OptN(MediaFile),
    created_by: OptN(NonEmpty),
    created_at: OptN(Timestamp),
    archived: Opt(Type.Boolean()),
    ingredients: Opt(Type.Array(Ingredient)),
    notes: Opt(Type.Array(VersionNote)),
  },
  strict,
);

const Asset = Type.Object(
  {
    ref: Ref,
    label: NonEmpty,
    kind: Opt(Type.String({ minLength: 1, not: { const: 'scene' } })),
    department: OptN(Ref),
    status: Opt(StringEnum(V.NODE_STATUSES)),
    costumes: Opt(RefList),
    versions: Opt(Type.Array(Version)),
    created_at: OptN(Timestamp),
    updated_at: OptN(Timestamp),
  },
  strict,
);

const ShootDay = Type.Object(
  {
    ref: Opt(Ref),
    day_number: Type.Integer({ minimum: 0 }),
    date: Date_,
    general_call: OptN(Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$' })),
    status: Opt(NonEmpty),
    scenes: Opt(RefList),
  },
  strict,
);

/** A step already decided: who decided what, when (an export carries decisions made through the API). */
const DecidedStep = Type.Object(
  {
    person: Ref,
    decision: OptN(StringEnum(V.STEP_DECISIONS)),
    decided_by: OptN(NonEmpty),
    note: OptN(Text),
    decided_at: OptN(Timestamp),
  },
  strict,
);

const Approval = Type.Object(
  {
    ref: Opt(Ref),
    title: NonEmpty,
    mode: StringEnum(V.APPROVAL_MODES),
    status: Opt(StringEnum(V.APPROVAL_STATUSES)),
    due: OptN(Date_),
    department: OptN(Ref),
    subject: OptN(Type.Object({ node: Ref, version: OptN(Ref) }, strict)),
    steps: Type.Array(Type.Union([Ref, DecidedStep]), { minItems: 1 }),
    current_step: Opt(Type.Integer({ minimum: 0 })),
    created_at: OptN(Timestamp),
    updated_at: OptN(Timestamp),
  },
  strict,
);

const DepartmentNote = Type.Object(
  {
    ref: Opt(Ref),
    department: OptN(Ref),
    node: OptN(Ref),
    summary: NonEmpty,
    created_at: OptN(Timestamp),
  },
  strict,
);

/**
 * A file a delivery's package or a submission holds: the file beside the document, and the
 * name it goes by (the file name as uploaded; without one, the path's last part).
 */
const TurnoverFile = Type.Object({ media: MediaFile, label: Opt(Text) }, strict);

const Delivery = Type.Object(
  {
    ref: Ref,
    title: NonEmpty,
    kind: StringEnum(V.DELIVERY_KINDS),
    status: Opt(StringEnum(V.DELIVERY_STATUSES)),
    due: OptN(Date_),
    from_department: OptN(Ref),
    to_department: OptN(Ref),
    external_to: OptN(NonEmpty),
    spec: Opt(Type.Array(FreeObject)),
    sent_at: OptN(Timestamp),
    gating_approval: OptN(Ref),
    /** The package: what the production sends. Absent: a sync leaves the package as it is. */
    files: Opt(Type.Array(TurnoverFile)),
  },
  strict,
);

const Grant = Type.Object(
  {
    kind: StringEnum(V.GRANT_KINDS),
    node: Opt(Ref),
    delivery: Opt(Ref),
    access: Opt(StringEnum(V.GRANT_ACCESS)),
    expires_at: OptN(Timestamp),
    revoked: Opt(Type.Boolean()),
  },
  strict,
);

/** The production's answer to a submission: its decision is the submission's status. */
const Review = Type.Object(
  {
    decision: StringEnum(V.REVIEW_DECISIONS),
    note: Opt(Text),
    reviewed_by: OptN(NonEmpty),
    reviewed_at: Timestamp,
  },
  strict,
);

/** Work an engagement submitted on a delivery, with the production's review of it. */
const Submission = Type.Object(
  {
    delivery: Ref,
    engagement: Ref,
    title: NonEmpty,
    note: Opt(Text),
    created_by: OptN(Text),
    created_at: Timestamp,
    files: Opt(Type.Array(TurnoverFile)),
    review: OptN(Review),
  },
  strict,
);

const Engagement = Type.Object(
  {
    ref: Ref,
    organisation: Ref,
    departments: Opt(RefList),
    grants: Opt(Type.Array(Grant)),
  },
  strict,
);

const PurchaseOrder = Type.Object(
  {
    ref: Opt(Ref),
    vendor: Ref,
    department: OptN(Ref),
    account: NonEmpty,
    description: Opt(Text),
    amount: Type.Number(),
    status: StringEnum(V.PO_STATUSES),
    date: Date_,
  },
  strict,
);

const CostLine = Type.Object(
  {
    account: NonEmpty,
    description: OptN(Text),
    budget: OptN(Type.Number()),
    actual: OptN(Type.Number()),
    committed: OptN(Type.Number()),
  },
  strict,
);

const CostReport = Type.Object(
  { week_of: Date_, active: Opt(Type.Boolean()), lines: Opt(Type.Array(CostLine)) },
  strict,
);

const ScriptChange = Type.Object(
  {
    ref: Opt(Ref),
    scene: Ref,
    change: NonEmpty,
    summary: Opt(Text),
    status: Opt(StringEnum(V.SCRIPT_CHANGE_STATUSES)),
    detected_at: Timestamp,
  },
  strict,
);

const ActivityEntry = Type.Object(
  { at: Timestamp, actor: NonEmpty, verb: NonEmpty, summary: Opt(Text), node: OptN(Ref) },
  strict,
);

const Job = Type.Object(
  {
    ref: Opt(Ref),
    kind: StringEnum(V.JOB_KINDS),
    model: Opt(NonEmpty),
    prompt: Opt(Text),
    status: Opt(NonEmpty),
    created_at: Timestamp,
    finished_at: OptN(Timestamp),
  },
  strict,
);

const LibraryFile = Type.Object(
  { path: NonEmpty, size: OptN(Type.Integer({ minimum: 0 })), detected_at: Timestamp },
  strict,
);

export const ProductionDocument = Type.Object(
  {
    production: ProductionBlock,
    episodes: Opt(Type.Array(Episode)),
    organisations: Opt(Type.Array(Organisation)),
    departments: Opt(Type.Array(Department)),
    people: Opt(Type.Array(Person)),
    scenes: Opt(Type.Array(Scene)),
    assets: Opt(Type.Array(Asset)),
    shoot_days: Opt(Type.Array(ShootDay)),
    approvals: Opt(Type.Array(Approval)),
    department_notes: Opt(Type.Array(DepartmentNote)),
    deliveries: Opt(Type.Array(Delivery)),
    engagements: Opt(Type.Array(Engagement)),
    submissions: Opt(Type.Array(Submission)),
    purchase_orders: Opt(Type.Array(PurchaseOrder)),
    cost_reports: Opt(Type.Array(CostReport)),
    script_changes: Opt(Type.Array(ScriptChange)),
    activity: Opt(Type.Array(ActivityEntry)),
    jobs: Opt(Type.Array(Job)),
    library: Opt(Type.Array(LibraryFile)),
  },
  {
    ...strict,
    $id: 'https://prodgraph.dev/schemas/production-document.json',
    title: 'prodgraph production document',
  },
);

export type ProductionDocument = Static<typeof ProductionDocument>;
export type DocAsset = Static<typeof Asset>;
export type DocVersion = Static<typeof Version>;
export type DocApproval = Static<typeof Approval>;
export type DocStep = DocApproval['steps'][number];
export type DocTurnoverFile = Static<typeof TurnoverFile>;
export type DocSubmission = Static<typeof Submission>;

/** The person ref of a step, written either as the ref alone or as a decided step. */
export const stepPerson = (step: DocStep): string => (typeof step === 'string' ? step : step.person);
