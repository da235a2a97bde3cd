import { Type, type Static } from 'typebox';
import { Nullable, Timestamp } from '../../domain/schema-kit.js';

export const Person = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    role: Type.String(),
    department: Nullable(Type.String({ description: 'Department slug' })),
    is_hod: Type.Boolean({ description: 'Head of department' }),
    is_admin: Type.Boolean({ description: 'Production admin' }),
    updated_at: Timestamp,
  },
  {
    $id: 'Person',
    title: 'Person (crew directory)',
    description: 'Never carries an email, a phone or any other contact detail.',
  },
);
export type Person = Static<typeof Person>;
