// Regenerates the small stand-in JPEGs referenced by the demo production documents.
//
//   node demo/make-images.mjs            # every demo/*/production.yaml
//   node demo/make-images.mjs single     # just demo/single
//
// Each `media:` path found on a version or an ingredient becomes one image (480x270, well
// under 25 KB): a gradient, a simple motif chosen by the asset's kind (a figure for a
// character, a garment for a costume, a horizon for a location or set, swatches for a
// fabric...) and a label naming what it shows. Output is deterministic, so re-running it
// changes nothing unless a document changed.
import { mkdirSync, readdirSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { parse } from 'yaml';

const W = 480;
const H = 270;
const here = dirname(fileURLToPath(import.meta.url));

// Base hues for the production accents (the palette of ACCENTS in src/domain/vocabulary.ts).
const ACCENT_HUE = {
  slate: 215,
  red: 0,
  orange: 25,
  amber: 40,
  green: 140,
  teal: 175,
  cyan: 190,
  blue: 215,
  indigo: 235,
  violet: 265,
  rose: 345,
};

function hash(text) {
  let h = 2166136261;
  for (const ch of text) h = Math.imul(h ^ ch.codePointAt(0), 16777619) >>> 0;
  return h;
}

// Small deterministic PRNG so every image is stable between runs.
function rng(seed) {
  let s = seed || 1;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

const esc = (text) =>
  String(text).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
  );

const hsl = (h, s, l) => `hsl(${Math.round(((h % 360) + 360) % 360)},${s}%,${l}%)`;

// Motifs: each returns SVG drawn in the middle/right of the frame, in `ink` over the gradient.
const MOTIFS = {
  character: (ink) => `
    <g fill="${ink}" opacity="0.85">
      <circle cx="360" cy="96" r="34"/>
      <path d="M290 230 C290 170 318 140 360 140 C402 140 430 170 430 230 Z"/>
    </g>`,
  costume: (ink) => `
    <g fill="none" stroke="${ink}" stroke-width="4" opacity="0.9">
      <path d="M360 40 q0 -12 10 -12 q10 0 10 10 q0 8 -20 16 l-62 26"/>
      <path d="M360 54 l62 26"/>
    </g>
    <path fill="${ink}" opacity="0.8" d="M300 80 L340 70 L360 96 L380 70 L420 80 L440 150 L418 156 L414 120
      L414 236 L306 236 L306 120 L302 156 L280 150 Z"/>`,
  location: (ink, r) => {
    let blocks = '';
    for (let x = 250; x < W; x += 22 + Math.floor(r() * 18)) {
      const h = 30 + Math.floor(r() * 70);
      blocks += `<rect x="${x}" y="${196 - h}" width="${16 + Math.floor(r() * 14)}" height="${h}"/>`;
    }
    return `
    <circle cx="400" cy="70" r="22" fill="#fff6d8" opacity="0.75"/>
    <g fill="${ink}" opacity="0.8">${blocks}<rect x="0" y="196" width="${W}" height="${H - 196}"/></g>`;
  },
  lighthouse: (ink) => `
    <g fill="${ink}" opacity="0.85">
      <path d="M346 200 L356 92 L384 92 L394 200 Z"/>
      <rect x="350" y="74" width="40" height="18"/>
      <path d="M346 74 L370 52 L394 74 Z"/>
      <path d="M0 200 Q160 186 320 200 L480 196 L480 270 L0 270 Z"/>
    </g>
    <circle cx="370" cy="84" r="10" fill="#fff3c4"/>
    <path d="M380 84 L480 60 L480 108 Z" fill="#fff3c4" opacity="0.35"/>`,
  prop: (ink) => `
    <g fill="${ink}" opacity="0.85">
      <rect x="270" y="208" width="190" height="10" rx="3"/>
      <rect x="338" y="110" width="64" height="98" rx="10"/>
      <rect x="350" y="86" width="40" height="24" rx="4"/>
      <path d="M350 86 Q370 50 390 86" fill="none" stroke="${ink}" stroke-width="5"/>
    </g>
    <circle cx="370" cy="160" r="18" fill="#fff0c0" opacity="0.8"/>`,
  vehicle: (ink) => `
    <g fill="${ink}" opacity="0.85">
      <path d="M266 196 L266 150 L300 146 L326 110 L420 110 L432 146 L462 152 L462 196 Z"/>
      <circle cx="306" cy="198" r="20"/><circle cx="424" cy="198" r="20"/>
    </g>
    <rect x="334" y="120" width="36" height="24" fill="#ffffff" opacity="0.35"/>
    <rect x="378" y="120" width="38" height="24" fill="#ffffff" opacity="0.35"/>`,
  effect: (_ink, r) => {
    let dots = '';
    for (let i = 0; i < 14; i++) {
      const x = 240 + r() * 230;
      const y = 60 + r() * 190;
      dots += `<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="${(4 + r() * 14).toFixed(1)}" fill="url(#glow)"/>`;
    }
    return dots;
  },
  swatch: (ink, r, hue) => {
    let cells = '';
    for (let i = 0; i < 3; i++) {
      const fill = hsl(hue + i * 14 + r() * 10, 35 + i * 10, 30 + i * 14);
      const x = 226 + i * 66;
      const y = 40 + i * 14;
      cells += `<rect x="${x}" y="${y}" width="110" height="140" rx="6" fill="${fill}" stroke="${ink}" stroke-width="2"/>
        <rect x="${x}" y="${y}" width="110" height="140" rx="6" fill="url(#weave)"/>`;
    }
    return cells;
  },
  reference: (ink) => `
    <g transform="rotate(-6 370 140)">
      <rect x="290" y="54" width="160" height="176" fill="#f4efe4"/>
      <rect x="302" y="66" width="136" height="124" fill="${ink}" opacity="0.75"/>
      <circle cx="370" cy="112" r="20" fill="#f4efe4" opacity="0.55"/>
      <path d="M334 190 C334 150 350 136 370 136 C390 136 406 150 406 190 Z" fill="#f4efe4" opacity="0.55"/>
    </g>`,
};

function motifFor(item) {
  if (item.ingredientKind) return item.ingredientKind === 'reference' ? 'reference' : 'swatch';
  if (/lighthouse|lamp room/i.test(item.title)) return 'lighthouse';
  if (item.kind === 'set') return 'location';
  return MOTIFS[item.kind] ? item.kind : 'effect';
}

function svgFor(item, accent) {
  const seed = hash(item.path + item.title);
  const r = rng(seed);
  const hue = (ACCENT_HUE[accent] ?? 215) + ((seed % 40) - 20);
  const top = hsl(hue, 45, 34);
  const bottom = hsl(hue - 12, 50, 12);
  const ink = hsl(hue + 180, 20, 85);
  const motif = MOTIFS[motifFor(item)](ink, r, hue);
  const long = item.title.length > 28;
  const title = item.title.length > 38 ? `${item.title.slice(0, 37)}…` : item.title;
  const stamp = item.stamp
    ? `<g transform="translate(392 16)"><rect width="76" height="24" rx="4" fill="#c0392b"/>
        <text x="38" y="17" text-anchor="middle" font-size="13" font-weight="bold" fill="#fff">${esc(item.stamp)}</text></g>`
    : '';
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}"
    font-family="DejaVu Sans, Helvetica, Arial, sans-serif">
  <defs>
    <linearGradient id="bg" x1="0" y1="0" x2="0.6" y2="1">
      <stop offset="0" stop-color="${top}"/><stop offset="1" stop-color="${bottom}"/>
    </linearGradient>
    <radialGradient id="glow">
      <stop offset="0" stop-color="#fffbe0"/><stop offset="0.4" stop-color="${hsl(hue + 20, 90, 70)}" stop-opacity="0.8"/>
      <stop offset="1" stop-color="${hsl(hue, 90, 50)}" stop-opacity="0"/>
    </radialGradient>
    <clipPath id="above"><rect width="${W}" height="${H - 78}"/></clipPath>
    <pattern id="weave" width="6" height="6" patternUnits="userSpaceOnUse">
      <path d="M0 3 H6 M3 0 V6" stroke="#000" stroke-opacity="0.18" stroke-width="1"/>
    </pattern>
  </defs>
  <rect width="${W}" height="${H}" fill="url(#bg)"/>
  <g clip-path="url(#above)"><g transform="translate(0 -22)">${motif}</g></g>
  <rect x="0" y="${H - 78}" width="${W}" height="78" fill="#000" opacity="0.55"/>
  <text x="18" y="${H - 46}" font-size="${long ? 17 : 22}" font-weight="bold" fill="#fff">${esc(title)}</text>
  <text x="18" y="${H - 20}" font-size="14" fill="#fff" opacity="0.85">${esc(item.subtitle)}</text>
  <text x="18" y="28" font-size="12" fill="#fff" opacity="0.7" letter-spacing="2">${esc(item.production)}</text>
  ${stamp}
</svg>`;
}

// Every media path in one document, with what it depicts. A path used twice (the same
// fabric on two versions) is drawn once, from its first use.
function mediaItems(doc) {
  const { title, format, season_number: season } = doc.production;
  const production = (format === 'episodic' ? `${title} · season ${season}` : title).toUpperCase();
  const items = new Map();
  for (const asset of doc.assets ?? []) {
    for (const v of asset.versions ?? []) {
      if (v.media && !items.has(v.media)) {
        items.set(v.media, {
          path: v.media,
          production,
          kind: asset.kind,
          title: `${asset.label} — v${v.version}`,
          subtitle: `${v.variant} · ${asset.kind} · ${v.released ? 'released' : v.status}`,
          stamp: v.released ? null : String(v.status).toUpperCase(),
        });
      }
      for (const ing of v.ingredients ?? []) {
        if (ing.media && !items.has(ing.media)) {
          items.set(ing.media, {
            path: ing.media,
            production,
            kind: asset.kind,
            ingredientKind: ing.kind,
            title: ing.label,
            subtitle: [ing.kind, ing.relation !== ing.kind && ing.relation, `for ${asset.label}`]
              .filter(Boolean)
              .join(' · '),
            stamp: null,
          });
        }
      }
    }
  }
  return [...items.values()];
}

async function build(dir) {
  const file = join(dir, 'production.yaml');
  const doc = parse(readFileSync(file, 'utf8'));
  let written = 0;
  for (const item of mediaItems(doc)) {
    const out = resolve(dir, item.path);
    mkdirSync(dirname(out), { recursive: true });
    const jpeg = await sharp(Buffer.from(svgFor(item, doc.production.accent)))
      .jpeg({ quality: 74, mozjpeg: true, chromaSubsampling: '4:2:0' })
      .toBuffer();
    writeFileSync(out, jpeg);
    written += 1;
    console.log(`${join(dir, item.path).slice(here.length + 1)}  ${jpeg.length} bytes`);
  }
  return written;
}

const only = process.argv.slice(2);
const dirs = readdirSync(here, { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(join(here, e.name, 'production.yaml')))
  .filter((e) => only.length === 0 || only.includes(e.name))
  .map((e) => join(here, e.name));
let total = 0;
for (const dir of dirs) total += await build(dir);
console.log(`${total} images`);
