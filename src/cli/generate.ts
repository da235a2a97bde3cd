import { generate, parseGenerateOptions } from '../generate/index.js';
import { out, parse, type Command } from './args.js';

export const generateCommand: Command = {
  name: 'generate',
  summary: 'write a generated production document (1 = a full season)',
  usage: `usage: prodgraph generate --scale N [--seed S] [--out FILE]

Writes a realistic, deterministic production document: at --scale 1 an episodic season of
about 3,000 scenes, 30,000 assets and 300,000 versions; fractions give smaller ones. The same
seed gives the same bytes. JSON by default, YAML when FILE ends in .yaml or .yml; without
--out the document goes to standard output. Touches no database.`,
  async run(args) {
    const { values } = parse(args, {
      scale: { type: 'string' },
      seed: { type: 'string' },
      out: { type: 'string' },
    });
    const tally = await generate(parseGenerateOptions(values), values.out);
    // with no --out the document itself is on stdout
    if (values.out) {
      out(
        `wrote ${values.out}: ${tally.scenes} scenes, ${tally.assets} assets, ${tally.versions} versions (${tally.releasedVersions} released)`,
      );
    }
  },
};
