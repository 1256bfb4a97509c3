/**
 * Layering rules (docs/architecture.md "Layering"), run by `pnpm lint`:
 * apps → packages → (protocol); infra/ beside packages, never below them. Workspaces reach
 * each other only through their package names (`@rakazo/x`, `@rakazo/x/testing`), never by a
 * relative path into another workspace's files, and test, testing and bench code is reachable
 * only from other test, testing and bench code.
 */
const WORKSPACE = "^(apps/[^/]+|packages/[^/]+|infra/sandboxes/[^/]+|bench)/";
/** Test files, test helpers (`src/testing/`, `tests/`) and benches (`bench/`, `*.bench.ts`). */
const TEST_OR_BENCH = [
  "\\.(test|bench)\\.ts$",
  "/testing/",
  "(^|/)bench/",
  "^tests/",
  "^scripts/test-computer\\.ts$",
  "^scripts/soak\\.ts$",
  "^vitest\\.config\\.ts$",
];

module.exports = {
  forbidden: [
    {
      name: "package-imports-app-or-infra",
      comment:
        "A library under packages/ never depends on a deployable (apps/) or on what runs inside " +
        "a computer (infra/): move the shared piece into a package (e.g. packages/protocol).",
      severity: "error",
      from: { path: "^packages/" },
      to: { path: "^(apps|infra)/" },
    },
    {
      name: "package-imports-root-tests",
      comment:
        "packages/ never import the root tests/ folder (it assembles whole apps); a package's " +
        "test helpers live in its own src/testing/, exported as ./testing.",
      severity: "error",
      from: { path: "^packages/" },
      to: { path: "^tests/" },
    },
    {
      name: "infra-imports-packages",
      comment:
        "Code that runs inside a computer (infra/) ships as a bundle of Node builtins: it may " +
        "import only the packages written to be bundled there (packages/protocol, " +
        "packages/page-helper); its tests may use any package by name.",
      severity: "error",
      from: { path: "^infra/", pathNot: TEST_OR_BENCH },
      to: { path: "^packages/", pathNot: "^packages/(protocol|page-helper)/" },
    },
    {
      name: "app-imports-other-app",
      comment:
        "Apps never import each other. Decision (docs/decisions.md, Layering): apps/web's tests " +
        "and test helpers may start the API in-process (@rakazo/api/app, a devDependency); " +
        "production code of an app never imports another app.",
      severity: "error",
      from: { path: "^apps/([^/]+)/", pathNot: TEST_OR_BENCH },
      to: { path: "^apps/", pathNot: "^apps/$1/" },
    },
    {
      name: "app-test-imports-other-app-internals",
      comment: "Even from tests, another app is reached through its package exports, not its files.",
      severity: "error",
      from: { path: "^apps/([^/]+)/" },
      to: { path: "^apps/", pathNot: "^apps/$1/", dependencyTypes: ["local"] },
    },
    {
      name: "cross-workspace-relative-import",
      comment:
        "A relative path into another workspace (../../packages/x/src/…) bypasses its exports; " +
        "import it by package name (add a ./testing or ./bench export if it is test code).",
      severity: "error",
      from: { path: `${WORKSPACE}`, pathNot: "^bench/" },
      to: { dependencyTypes: ["local"], pathNot: ["^$1/", "node_modules"] },
    },
    {
      name: "bench-relative-import",
      comment:
        "The bench workspace reaches packages by name too; the one relative path it may take is " +
        "into tests/support/ (the stacks the Docker suites start), which has no package name.",
      severity: "error",
      from: { path: "^bench/" },
      to: { dependencyTypes: ["local"], pathNot: ["^bench/", "^tests/support/", "node_modules"] },
    },
    {
      name: "root-relative-import-into-workspace",
      comment: "tests/ and scripts/ reach workspaces by package name, like any other consumer.",
      severity: "error",
      from: { path: "^(tests|scripts)/" },
      to: { dependencyTypes: ["local"], path: "^(apps|packages|infra)/" },
    },
    {
      name: "production-imports-test-code",
      comment:
        "Production code never imports test files, test helpers (src/testing/, tests/) or " +
        "benches; they are not shipped (the image holds none).",
      severity: "error",
      from: { pathNot: TEST_OR_BENCH },
      to: { path: TEST_OR_BENCH },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: ["node_modules", "^\\.tools", "/dist/", "^apps/web/src/client/"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    combinedDependencies: false,
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".json"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
