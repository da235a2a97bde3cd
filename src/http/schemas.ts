import { Type } from 'typebox';

/** Schema pieces shared by every route module. */

export const ErrorBody = Type.Object(
  { detail: Type.String({ description: 'What went wrong, in one sentence' }) },
  { $id: 'ErrorBody', title: 'Error' },
);

export { StringEnum, Nullable } from '../domain/schema-kit.js';

export const Timestamp = Type.String({ format: 'date-time', description: 'UTC ISO-8601' });
export const CalendarDate = Type.String({ format: 'date', description: 'YYYY-MM-DD' });

export const errorResponses = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, ErrorBody]));
