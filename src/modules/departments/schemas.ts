import { Type, type Static } from 'typebox';
import { PRIVACIES } from '../../domain/vocabulary.js';
import { StringEnum, Timestamp } from '../../domain/schema-kit.js';

export const DepartmentRow = Type.Object(
  {
    id: Type.Integer(),
    slug: Type.String(),
    name: Type.String(),
    cluster: Type.String({ description: 'Grouping shown in the app (open set)' }),
    phases: Type.Array(Type.String()),
    mission: Type.String(),
    key_roles: Type.Array(Type.String()),
    privacy: StringEnum(PRIVACIES),
    unveiled: Type.Boolean(),
    updated_at: Timestamp,
  },
  { $id: 'DepartmentRow', title: 'Department (list row)' },
);

export const DepartmentDetail = Type.Object(
  {
    id: Type.Integer(),
    slug: Type.String(),
    name: Type.String(),
    cluster: Type.String(),
    registry: Type.Record(Type.String(), Type.Unknown(), {
      description: 'Free-form, as the production keeps it',
    }),
    people: Type.Array(
      Type.Object({ id: Type.Integer(), name: Type.String(), role: Type.String(), is_hod: Type.Boolean() }),
      { description: 'Crew of the department, heads first; never contact details' },
    ),
    assets: Type.Integer({
      minimum: 0,
      description: 'Number of assets (graph nodes other than scenes) of the department',
    }),
  },
  { $id: 'DepartmentDetail', title: 'Department (detail)' },
);

export const DepartmentParams = Type.Object({
  slug: Type.String({ minLength: 1, maxLength: 200, description: 'Department slug, as on GET /departments' }),
});

export type DepartmentRow = Static<typeof DepartmentRow>;
export type DepartmentDetail = Static<typeof DepartmentDetail>;
