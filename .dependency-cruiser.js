/*
 * The layers of docs/architecture.md ("Layers"), held by `npm run lint` (depcruise src). A file
 * may import from its own layer and the layers below it, never from one above, and no imports
 * that run may form a cycle. test/layers.test.ts fails when LAYERS and the doc's table disagree.
 */

/** Top first; a file belongs to the highest layer that names it. Paths as the doc writes them. */
export const LAYERS = [
  { name: 'process', paths: ['src/server.ts', 'src/cli.ts', 'src/cli/', 'src/cluster/'] },
  { name: 'app', paths: ['src/app.ts', 'src/mcp/'] },
  { name: 'http', paths: ['src/http/', 'src/modules/*/routes.ts'] },
  { name: 'capabilities', paths: ['src/modules/'] },
  {
    name: 'whole-production',
    paths: ['src/document/', 'src/generate/', 'src/backup/', 'src/ops/', 'src/metrics/'],
  },
  { name: 'access', paths: ['src/auth/', 'src/context.ts'] },
  { name: 'data', paths: ['src/db/', 'src/media/'] },
  {
    name: 'foundation',
    paths: [
      'src/config.ts',
      'src/config-network.ts',
      'src/config-sign-in.ts',
      'src/errors.ts',
      'src/validation.ts',
      'src/version.ts',
      'src/domain/',
      'src/util/',
    ],
  },
];

/** A path of the doc as a dependency-cruiser pattern: a folder and what is under it, or one file. */
export const pattern = (path) => {
  const source = path.replace(/\./g, '\\.').replace(/\*/g, '[^/]+');
  return path.endsWith('/') ? `^${source}` : `^${source}$`;
};

const patterns = (paths) => paths.map(pattern);
const above = (index) => LAYERS.slice(0, index).flatMap((layer) => patterns(layer.paths));

const layerRules = LAYERS.slice(1).map((layer, i) => {
  const index = i + 1;
  return {
    name: `layer-${layer.name}`,
    comment: `${layer.name} may import only its own layer and those below it (docs/architecture.md, Layers)`,
    severity: 'error',
    from: { path: patterns(layer.paths), pathNot: above(index) },
    to: { path: above(index) },
  };
});

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    ...layerRules,
    {
      name: 'no-circular',
      comment:
        'no cycle of imports that run; a cycle through a type-only import is erased by the compiler and allowed',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'an import that resolves to no file is a typo or a missing package',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // type-only imports count: a type from a layer above is as much a dependency on it
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // packages resolved through their `exports`, as Node resolves them
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
