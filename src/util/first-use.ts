/** A value made by `make` the first time it is asked for, then kept (a compile a process may never need). */
export function onFirstUse<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}
