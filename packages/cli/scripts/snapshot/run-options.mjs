// The extra esbuild options of the `lathe run` snapshot entry (run-entry.ts), on top of the CLI bundle's:
// - no native `import()`: code compiled into a snapshot has no dynamic-import callback after restore (every
//   `import()` fails with ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING), so esbuild turns the remaining ones (external
//   packages, plugin files) into `require()`, which the banner routes to a real `require` once restored;
// - `import.meta.url` is the bundle file's URL (CJS has no import.meta) — fixed when the snapshot is built;
// - `web-tree-sitter` (imported at the top of the bash analysis) becomes a stand-in that requires the package on
//   first use, since a snapshot builder may require only built-ins;
// - the interactive UI (Ink, yoga-layout's top-level await, which CJS cannot hold) is replaced by a stand-in that
//   says to use the normal CLI.
import { createRequire } from "node:module"

const here = new URL(".", import.meta.url)

/** Package stand-ins that require the real package on first access to an export (after restore). */
const lazyPackages = (names) => ({
  name: "lazy-packages",
  setup(b) {
    const pattern = new RegExp(`^(${names.map((n) => n.replace(/[/.]/g, "\\$&")).join("|")})$`)
    b.onResolve({ filter: pattern }, (args) => ({ path: args.path, namespace: "lazy-package" }))
    b.onLoad({ filter: /.*/, namespace: "lazy-package" }, (args) => {
      const keys = Object.keys(createRequire(here)(args.path)).filter((key) => key !== "default")
      return {
        contents:
          `let real\nconst load = () => (real ??= __latheRuntimeRequire(${JSON.stringify(args.path)}))\n` +
          `for (const key of ${JSON.stringify(keys)})\n` +
          "  Object.defineProperty(module.exports, key, { enumerable: true, get: () => load()[key] })\n",
        loader: "js"
      }
    })
  }
})

/** Replaces the interactive command with a stand-in: this prototype snapshots `lathe run` only. */
const stubInteractive = {
  name: "stub-interactive",
  setup(b) {
    b.onLoad({ filter: /[\\/]cli[\\/]src[\\/]commands[\\/]interactive\.ts$/ }, () => ({
      contents:
        "export const interactiveCommand = async (_argv, io) => {\n" +
        '  io.stderr("lathe: the interactive UI is not part of the startup-snapshot prototype; run the normal lathe for it.\\n")\n' +
        "  return 2\n}\n",
      loader: "js"
    }))
  }
}

// `require` inside the bundle: built-ins while the snapshot is built; after restore, a real require from the
// bundle's folder (or LATHE_SNAPSHOT_BASE), that also takes file: URLs (plugin files) and ES modules (require(esm)).
const banner = `"use strict";
var __latheBuiltinRequire = require;
var __latheFullRequire;
var __latheRuntimeRequire = (id) => {
  if (typeof id === "string" && id.startsWith("file:")) id = __latheBuiltinRequire("node:url").fileURLToPath(id);
  if (__latheBuiltinRequire("node:v8").startupSnapshot.isBuildingSnapshot()) return __latheBuiltinRequire(id);
  __latheFullRequire ??= __latheBuiltinRequire("node:module").createRequire(process.env.LATHE_SNAPSHOT_BASE || __filename);
  return __latheFullRequire(id);
};
require = __latheRuntimeRequire;
var __latheImportMetaUrl = __latheBuiltinRequire("node:url").pathToFileURL(__filename).href;
`

/** The options build.mjs adds for `lathe-run`. */
export const runBuildOptions = {
  supported: { "dynamic-import": false },
  define: { "import.meta.url": "__latheImportMetaUrl" },
  banner: { js: banner },
  plugins: [lazyPackages(["web-tree-sitter"]), stubInteractive]
}
