import type { Look } from './analyse.js';

const percent = (share: number): string => `${Math.round(share * 100)}%`;

const contrastWord = (c: number): string =>
  c < 0.1 ? 'low-contrast' : c > 0.22 ? 'high-contrast' : 'medium-contrast';

const saturationWord = (s: number): string =>
  s < 0.04 ? 'colourless' : s < 0.15 ? 'muted' : s < 0.35 ? 'moderately saturated' : 'strongly saturated';

/** One plain sentence, every word of it taken from the figures. */
export function summarise(look: Look): string {
  const { exposure, colour, palette } = look;
  const mood = `${exposure.key === 'mid' ? 'Mid' : exposure.key === 'low' ? 'Low' : 'High'}-key, ${contrastWord(exposure.contrast)}, ${colour.warmth} still`;
  // shades that share a plain name read as one colour in a sentence
  const byName = new Map<string, number>();
  for (const p of palette) byName.set(p.name, (byName.get(p.name) ?? 0) + p.share);
  const leading = [...byName].sort((a, b) => b[1] - a[1]);
  const main = leading
    .slice(0, 2)
    .map(([name, share]) => `${name} (${percent(share)})`)
    .join(' and ');
  const hue = colour.dominant_hue ? `, ${colour.dominant_hue} the leading hue` : '';
  const extremes = [
    exposure.clipped_highlights >= 0.005 ? `${percent(exposure.clipped_highlights)} clipped highlights` : '',
    exposure.crushed_shadows >= 0.005 ? `${percent(exposure.crushed_shadows)} crushed shadows` : '',
  ].filter(Boolean);
  const tail = extremes.length ? `, with ${extremes.join(' and ')}` : '';
  const spread = leading[0] !== undefined && leading[0][1] < 0.3;
  const body = spread ? `spread across ${leading.length} colours, led by ${main}` : `dominated by ${main}`;
  return `${mood} ${body}; ${saturationWord(colour.saturation)}${hue}${tail}.`;
}
