import { Type, type Static } from 'typebox';
import { JOB_KINDS } from '../../domain/vocabulary.js';
import { MediaId, Nullable, StringEnum, Timestamp } from '../../domain/schema-kit.js';

export const GenerationJob = Type.Object(
  {
    id: Type.Integer(),
    kind: StringEnum(JOB_KINDS),
    model: Type.String({
      description:
        'Open set: image-standard, video-standard, …; empty for a job imported from a system that named none',
    }),
    prompt: Type.String(),
    status: Type.String({ description: 'Open set: queued, running, succeeded, failed, …' }),
    media_path: Nullable(
      Type.String({
        description: 'The result, served by GET /media/{path}?t=<ticket>; null until there is one',
      }),
    ),
    media_id: MediaId,
    created_at: Timestamp,
    finished_at: Nullable(Timestamp),
    updated_at: Timestamp,
  },
  { $id: 'GenerationJob', title: 'Generation job' },
);
export type GenerationJob = Static<typeof GenerationJob>;
