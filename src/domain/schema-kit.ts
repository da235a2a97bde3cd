import { Type, type TSchema } from 'typebox';

/** A closed vocabulary as a plain `enum`: one clear validation message, typed as the union. */
export const StringEnum = <T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
