// `npm run lint:arch`: the layering of src/ (issue 22, item 7), checked by dependency-cruiser.
//
// Folders are layers. LAYERS lists them bottom to top: a file may import its own layer and the
// layers below it, never one above; nothing may form a cycle; every file of src/ must belong to
// a layer. Members are folders of src/ (`core` is src/core/**) or single files (`cli.ts`).
// To change the architecture, edit LAYERS (and `peersMayImport`): the rules follow from it.
// Type-only imports count: a layer that names a higher layer's types depends on it.

/** @type {{ name: string, members: string[], peersMayImport: boolean, note: string }[]} */
const LAYERS = [
  {
    name: "core",
    members: ["core", "types"],
    peersMayImport: true,
    note: "domain types and rules (ResolvedGroup, key naming, slot rules, stream ids, the group set); types: ambient .d.ts",
  },
  {
    name: "redis",
    members: ["redis", "logging"],
    peersMayImport: true,
    note: "client plumbing: connections, errors, pipelines, capability detection; logging",
  },
  {
    name: "scripts",
    members: ["scripts"],
    peersMayImport: true,
    note: "one typed module per Lua script",
  },
  {
    name: "config",
    members: ["config"],
    peersMayImport: true,
    note: "configuration: schema, loading, validation",
  },
  {
    name: "metrics",
    members: ["metrics"],
    peersMayImport: true,
    note: "Prometheus plumbing and the one table of metric definitions",
  },
  {
    name: "events",
    members: ["events"],
    peersMayImport: true,
    note: "the advisory events writer (best effort XADD to events.stream), used by services and above",
  },
  {
    name: "services",
    members: ["lease", "sweep", "discovery", "maintenance", "scrape", "status", "reads"],
    // true: services may use each other (no cycles); false: each service uses only lower layers.
    peersMayImport: true,
    note: "domain services; reads: bounded read-only views (dead letters) for operators and the console",
  },
  {
    name: "runtime",
    members: ["daemon", "http", "ui"],
    peersMayImport: true,
    note: "the daemon's runtime: composition, HTTP, the web console",
  },
  {
    name: "operations",
    members: ["operations"],
    peersMayImport: true,
    note: "what the operator commands do (inspect report, dead-letter redrive/purge/restore/save, status report): above the daemon, which never needs them",
  },
  {
    name: "commands",
    members: ["commands"],
    peersMayImport: true,
    note: "the CLI's commands, one spec each (Command: words, options, help, execute), dispatched alike; operator/: the operator verbs",
  },
  { name: "cli", members: ["cli.ts"], peersMayImport: true, note: "the entry point" },
  { name: "demo", members: ["demo"], peersMayImport: true, note: "npm run demo (not packaged)" },
];

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&");
/** A path regex of one member: a folder and everything under it, or one file. */
const memberPath = (member) =>
  member.endsWith(".ts") ? `^src/${escape(member)}$` : `^src/${escape(member)}/`;
const anyOf = (members) => members.map(memberPath);
const membersFrom = (index) => LAYERS.slice(index).flatMap((layer) => layer.members);

const layerRules = LAYERS.flatMap((layer, index) => {
  const rules = [];
  const above = membersFrom(index + 1);
  if (above.length > 0) {
    rules.push({
      name: `layer-${layer.name}-imports-upward`,
      comment: `${layer.name} (${layer.members.join(", ")}) is layer ${index + 1} of ${LAYERS.length}: it may import only itself and ${
        index === 0
          ? "nothing else of src"
          : LAYERS.slice(0, index)
              .map((l) => l.name)
              .join(", ")
      }, not ${above.join(", ")}`,
      severity: "error",
      from: { path: anyOf(layer.members) },
      to: { path: anyOf(above) },
    });
  }
  if (!layer.peersMayImport) {
    for (const member of layer.members) {
      const peers = layer.members.filter((other) => other !== member);
      if (peers.length === 0) continue;
      rules.push({
        name: `layer-${layer.name}-${member}-imports-peer`,
        comment: `${member} may not import the other members of its layer (${peers.join(", ")})`,
        severity: "error",
        from: { path: memberPath(member) },
        to: { path: anyOf(peers) },
      });
    }
  }
  return rules;
});

const everyMember = LAYERS.flatMap((layer) => layer.members);

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: "no-circular",
      comment: "No import cycles anywhere in src (type-only imports included).",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "no-circular-folders",
      comment:
        "No cycles between folders either (a -> b in one file, b -> a in another), peers of one layer included.",
      severity: "error",
      scope: "folder",
      from: { path: "^src/" },
      to: { circular: true },
    },
    ...layerRules,
    {
      name: "not-in-a-layer",
      comment:
        "Every file of src belongs to a layer: add its folder to LAYERS in config/dependency-cruiser.js.",
      severity: "error",
      from: { path: "^src/", pathNot: anyOf(everyMember) },
      to: {},
    },
    {
      name: "imports-a-file-in-no-layer",
      comment:
        "Every file of src belongs to a layer: add its folder to LAYERS in config/dependency-cruiser.js.",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^src/", pathNot: anyOf(everyMember) },
    },
    {
      name: "src-imports-test",
      comment: "The product does not import test code.",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^test/" },
    },
    {
      name: "packaged-code-imports-a-dev-dependency",
      comment:
        "A production install has no devDependencies: only src/demo (not packaged) and type-only imports may use them.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/demo/" },
      to: { dependencyTypes: ["npm-dev"], dependencyTypesNot: ["type-only"] },
    },
  ],
  options: {
    doNotFollow: { path: ["node_modules"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
