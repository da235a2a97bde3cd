import type { ProductionDocument } from '../../src/document/schema.js';

/**
 * A small but complete production document; tests start from it and change what they test.
 * `code` keeps productions apart when one test loads several.
 */
export function smallProduction(
  code = 'testprod',
  overrides: Partial<ProductionDocument> = {},
): ProductionDocument {
  return {
    production: {
      code,
      title: `Test ${code}`,
      logline: 'A test production.',
      status: 'active',
      phase: 'production',
      accent: 'teal',
      format: 'single',
      filespace: `${code}-fs`,
    },
    organisations: [
      { ref: 'org-pix', name: 'Pixelworks Ltd' },
      { ref: 'org-hal', name: 'Halide FX' },
    ],
    departments: [
      {
        slug: 'costume',
        name: 'Costume',
        cluster: 'Art',
        phases: ['prep', 'production'],
        mission: 'Dress every character.',
        key_roles: ['Costume Designer'],
        privacy: 'open',
        unveiled: true,
        accounts: ['2300'],
        registry: { rails: 3 },
      },
      {
        slug: 'vfx',
        name: 'Visual Effects',
        cluster: 'Post',
        phases: ['post'],
        mission: 'Make the impossible.',
        key_roles: ['VFX Supervisor'],
        privacy: 'restricted',
        unveiled: false,
        accounts: ['4200'],
      },
    ],
    people: [
      {
        ref: 'p-ana',
        name: 'Ana Ruiz',
        role: 'Costume Designer',
        department: 'costume',
        is_hod: true,
        email: 'ana@example.test',
        phone: '+44 20 7946 0001',
      },
      {
        ref: 'p-ben',
        name: 'Ben Okafor',
        role: 'VFX Supervisor',
        department: 'vfx',
        is_hod: true,
        is_admin: true,
        email: 'ben@example.test',
        phone: '+44 20 7946 0002',
      },
      { ref: 'p-cy', name: 'Cy Marsh', role: 'Costume Assistant', department: 'costume' },
    ],
    scenes: [
      {
        ref: 'sc1',
        number: '1',
        slugline: 'INT. WARD - NIGHT',
        synopsis: 'Mara arrives.',
        status: 'planned',
        revision_color: 'white',
        elements: { cast: ['Mara'] },
        assets: ['ch-mara', 'loc-ward'],
      },
      { ref: 'sc2', number: '2', slugline: 'EXT. ROOF - DAWN', status: 'omitted', assets: ['loc-ward'] },
    ],
    assets: [
      {
        ref: 'ch-mara',
        label: 'Mara',
        kind: 'character',
        department: 'costume',
        status: 'active',
        costumes: ['co-coat'],
      },
      {
        ref: 'co-coat',
        label: 'Mara coat',
        kind: 'costume',
        department: 'costume',
        status: 'active',
        versions: [
          {
            ref: 'v-coat-1',
            version: 1,
            variant: 'Main',
            status: 'approved',
            released: true,
            note: 'First look',
            created_by: 'p-ana',
            created_at: '2026-03-01T10:00:00Z',
            ingredients: [{ ref: 'ing-wool', kind: 'fabric', label: 'Black wool', relation: 'primary' }],
          },
          { ref: 'v-coat-2', version: 2, variant: 'Main', status: 'wip', released: false },
        ],
      },
      { ref: 'loc-ward', label: 'Ward', kind: 'location', department: 'vfx', status: 'planned' },
    ],
    shoot_days: [
      {
        ref: 'd1',
        day_number: 1,
        date: '2026-04-01',
        general_call: '07:00',
        status: 'scheduled',
        scenes: ['sc1'],
      },
    ],
    approvals: [
      {
        ref: 'ap-coat',
        title: 'Mara coat v2',
        mode: 'chain',
        status: 'pending',
        due: '2026-04-01',
        department: 'costume',
        subject: { node: 'co-coat', version: 'v-coat-2' },
        steps: ['p-ana', 'p-ben'],
      },
      {
        ref: 'ap-done',
        title: 'Ward plates',
        mode: 'decision',
        status: 'approved',
        department: 'vfx',
        steps: ['p-ben'],
      },
    ],
    department_notes: [
      {
        ref: 'n1',
        department: 'costume',
        node: 'sc1',
        summary: 'Coat must read wet',
        created_at: '2026-03-02T09:00:00Z',
      },
    ],
    deliveries: [
      {
        ref: 'dl-plates',
        title: 'Plates, reel 1',
        kind: 'external',
        status: 'ready',
        due: '2026-05-01',
        from_department: 'vfx',
        external_to: 'Pixelworks Ltd',
        spec: [{ format: 'EXR' }],
        gating_approval: 'ap-done',
      },
      {
        ref: 'dl-int',
        title: 'Costume refs to VFX',
        kind: 'internal',
        status: 'draft',
        from_department: 'costume',
        to_department: 'vfx',
      },
    ],
    engagements: [
      {
        ref: 'eng-pix',
        organisation: 'org-pix',
        departments: ['vfx'],
        grants: [
          { kind: 'scene', node: 'sc1' },
          { kind: 'character', node: 'ch-mara' },
          { kind: 'delivery', delivery: 'dl-plates', access: 'submit' },
          { kind: 'own_po' },
        ],
      },
      {
        ref: 'eng-hal',
        organisation: 'org-hal',
        departments: ['costume'],
        grants: [{ kind: 'own_po', revoked: true }],
      },
    ],
    purchase_orders: [
      {
        ref: 'po1',
        vendor: 'org-pix',
        department: 'vfx',
        account: '4200',
        description: 'Plate cleanup',
        amount: 12500,
        status: 'open',
        date: '2026-03-02',
      },
      {
        ref: 'po2',
        vendor: 'org-pix',
        department: null,
        account: '9000',
        description: 'Insurance share',
        amount: 900,
        status: 'open',
        date: '2026-03-02',
      },
    ],
    cost_reports: [
      {
        week_of: '2026-03-02',
        active: true,
        lines: [{ account: '4200', description: 'VFX', budget: 250000, actual: 41000, committed: 12500 }],
      },
    ],
    script_changes: [
      {
        ref: 'scc1',
        scene: 'sc1',
        change: 'modified',
        summary: 'Mara enters from the stairs',
        status: 'pending',
        detected_at: '2026-03-03T08:00:00Z',
      },
    ],
    activity: [
      {
        at: '2026-03-01T10:00:00Z',
        actor: 'Ana Ruiz',
        verb: 'released',
        summary: 'Mara coat v1',
        node: 'co-coat',
      },
    ],
    jobs: [
      {
        ref: 'job1',
        kind: 'image',
        model: 'image-standard',
        prompt: 'Wet wool coat',
        status: 'succeeded',
        created_at: '2026-03-01T11:00:00Z',
      },
    ],
    library: [{ path: 'plates/r1/sh010.exr', size: 81234567, detected_at: '2026-03-01T11:00:00Z' }],
    ...overrides,
  };
}

/** The same production as an episodic series with two episodes. */
export function smallSeries(code = 'testseries'): ProductionDocument {
  const doc = smallProduction(code);
  return {
    ...doc,
    production: { ...doc.production, format: 'episodic', season_number: 1, current_episode: 'ep1' },
    episodes: [
      { ref: 'ep1', code: '101', title: 'Pilot' },
      { ref: 'ep2', code: '102', title: 'Second' },
    ],
    scenes: doc.scenes!.map((s, i) => ({ ...s, episode: i === 0 ? 'ep1' : 'ep2' })),
  };
}
