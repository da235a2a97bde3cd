import { onFirstUse } from '../util/first-use.js';

/**
 * When the app compiles each route's validators and serializers: when a route first needs one
 * (the default: a server starts without compiling what it may never send, most of an app's
 * start-up CPU), or all at start-up (a test's proof that every schema compiles).
 */
export type CompileSchemas = 'first-use' | 'start';

/** A value made by `make` when `when` says, then kept. */
export function compiledWhen<T>(when: CompileSchemas, make: () => T): () => T {
  const get = onFirstUse(make);
  if (when === 'start') get();
  return get;
}
