import { stringify } from 'yaml';

export type OutputFormat = 'json' | 'yaml';

/** A document as its top-level block and its list sections, each produced lazily. */
export interface DocumentStream {
  production: Record<string, unknown>;
  sections: Array<[name: string, items: Iterable<unknown>]>;
}

const FLUSH_AT = 1 << 18;

// block style throughout, no folding of long lines and no anchors: one object, one text
const YAML_OPTIONS = { lineWidth: 0, aliasDuplicateObjects: false } as const;

/**
 * The document as text chunks, item by item, so memory stays flat however large it is: JSON as
 * one object whose lists are written element by element, YAML as a top-level mapping whose
 * sequences are written entry by entry. Feed it to `stream.pipeline` for backpressure.
 */
export function* documentChunks(doc: DocumentStream, format: OutputFormat): Generator<string> {
  let buffer = '';
  function* emit(text: string): Generator<string> {
    buffer += text;
    if (buffer.length >= FLUSH_AT) {
      yield buffer;
      buffer = '';
    }
  }

  if (format === 'json') {
    yield* emit(`{"production":${JSON.stringify(doc.production)}`);
    for (const [name, items] of doc.sections) {
      yield* emit(`,\n${JSON.stringify(name)}:[`);
      let first = true;
      for (const item of items) {
        yield* emit(`${first ? '\n' : ',\n'}${JSON.stringify(item)}`);
        first = false;
      }
      yield* emit(']');
    }
    yield* emit('}\n');
  } else {
    yield* emit(stringify({ production: doc.production }, YAML_OPTIONS));
    for (const [name, items] of doc.sections) {
      let empty = true;
      for (const item of items) {
        // a one-element sequence at column 0 is exactly one entry of the section's sequence
        yield* emit(`${empty ? `${name}:\n` : ''}${stringify([item], YAML_OPTIONS)}`);
        empty = false;
      }
      if (empty) yield* emit(`${name}: []\n`);
    }
  }
  if (buffer) yield buffer;
}
