import { Type } from 'typebox';

export const Filespace = Type.String({
  description:
    "Name of the filespace install the agent runs against; must be the production's active install (403 otherwise)",
});
