/**
 * The layer rules of src/ (README "Architecture"): every folder imports only from its own
 * layer's lower neighbours, never upward, and no two folders import each other in a cycle.
 * Run by `npm test` (`npm run layers`).
 */
const LAYERS = [
  ['shared'],
  ['store'],
  ['keys', 'catalog', 'telemetry'],
  ['billing', 'gate', 'notifications', 'routing', 'auth'],
  ['providers'],
  ['http', 'config.ts'],
  ['chat', 'messages', 'embeddings', 'media', 'audio', 'jobs', 'mcp', 'admin', 'fine-tuning', 'openapi', 'key-info', 'portal', 'payments'],
  ['gateway.ts', 'shared-state.ts', 'runnable-models.ts', 'startup-failure.ts', 'main.ts', 'demo.ts', 'demo-providers.ts', 'cli'],
];

const pathOf = (names) => `^src/(${names.map((n) => n.replace('.', '\\.')).join('|')})(/|$)`;

const upward = [];
LAYERS.forEach((layer, i) => {
  const higher = LAYERS.slice(i + 1).flat();
  if (higher.length === 0) return;
  upward.push({
    name: `layer-${i}-imports-upward`,
    comment: `${layer.join(', ')} may import only from lower layers (README "Architecture").`,
    severity: 'error',
    from: { path: pathOf(layer) },
    to: { path: pathOf(higher) },
  });
});

module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'no-folder-cycles',
      comment: 'Folders of src/ never import each other in a cycle.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { path: '^src/' } },
    },
    {
      name: 'src-not-from-tests',
      comment: 'Production code never imports tests, emulators or the benchmark.',
      severity: 'error',
      from: { path: '^src/', pathNot: '(\\.test\\.ts$|^src/demo-providers\\.ts$)' },
      to: { path: '^(test|bench)/|\\.test\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^(src|emulators)/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
