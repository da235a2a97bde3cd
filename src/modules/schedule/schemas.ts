import { Type, type Static } from 'typebox';
import { CalendarDate, Id, Nullable } from '../../domain/schema-kit.js';

const marked = (what: string) =>
  Type.Optional(
    Type.Boolean({
      description: `Only when episode_id is given on an episodic production: ${what}. Absent otherwise.`,
    }),
  );

export const ScheduleStrip = Type.Object(
  {
    node_id: Type.Integer({ description: "The scene's node id" }),
    number: Type.String(),
    slugline: Type.String(),
    episode_id: Type.Optional(Type.Integer({ description: 'Episodic productions only (absent otherwise)' })),
    episode_code: Type.Optional(Type.String({ description: 'Same presence rule as episode_id' })),
    marked: marked("the scene's episode is one of the episode_id values"),
  },
  { $id: 'ScheduleStrip', title: 'Schedule strip' },
);

export const ShootDay = Type.Object(
  {
    id: Type.Integer(),
    day_number: Type.Integer(),
    date: CalendarDate,
    general_call: Nullable(Type.String({ description: 'Time of day, e.g. 07:00' })),
    status: Type.String({ description: 'Open set: scheduled, shot, moved, cancelled, …' }),
    scenes: Type.Array(ScheduleStrip, { description: 'Strips in shooting order' }),
    updated_at: Type.String({ format: 'date-time', description: 'When the day or its strips last changed' }),
    marked: marked('at least one strip of the day is marked'),
  },
  { $id: 'ShootDay', title: 'Shoot day (schedule row)' },
);
export type ShootDay = Static<typeof ShootDay>;

export const ScheduleQuery = Type.Object({
  episode_id: Type.Optional(
    Type.Array(Id(), {
      maxItems: 500,
      description:
        'Repeatable. Episodic productions: marks strips of these episodes and the days holding them; drops nothing. ' +
        'An id that is not an episode of this production is 422. Ignored on a single production.',
    }),
  ),
});
