// An esbuild plugin for snapshot entries: replaces some Node built-in modules with stand-ins whose exports load the
// real module on first access (`process.getBuiltinModule`). A snapshot builder script may load only the built-ins
// Node has verified for snapshots; `node:sqlite` aborts the build ("Unknown external reference"), and others
// (child_process, module, worker_threads …) warn that their state may be out of sync after deserialization. With
// the stand-ins, a module that imports them evaluates in the snapshot, and the real module loads at run time, in
// the restored process. Contract: the bundle must not *use* these modules while the snapshot is built (reading a
// named export is a use: it loads the module).

/** The built-ins deferred by default: every one the snapshot builder crashed on or warned about in this experiment. */
export const DEFERRED_BUILTINS = [
  "sqlite", // aborts the build: "Unknown external reference"
  "http", // aborts the build: "global handle not serialized" (the HTTP parser)
  "https",
  "http2",
  "child_process",
  "module",
  "worker_threads",
  "net",
  "tty",
  "readline",
  "readline/promises"
]

/** The plugin; `names` are built-in names without the `node:` prefix. */
export const lazyBuiltins = (names = DEFERRED_BUILTINS) => ({
  name: "lazy-builtins",
  setup(b) {
    const pattern = new RegExp(`^(node:)?(${names.map((n) => n.replace("/", "\\/")).join("|")})$`)
    b.onResolve({ filter: pattern }, (args) => ({ path: args.path.replace(/^node:/, ""), namespace: "lazy-builtin" }))
    b.onLoad({ filter: /.*/, namespace: "lazy-builtin" }, (args) => {
      const real = process.getBuiltinModule(`node:${args.path}`)
      if (real === undefined) throw new Error(`node:${args.path} is not a built-in module of this Node.`)
      const keys = Object.keys(real).filter((key) => key !== "default")
      return {
        contents:
          `let real\nconst load = () => (real ??= process.getBuiltinModule(${JSON.stringify(`node:${args.path}`)}))\n` +
          `for (const key of ${JSON.stringify(keys)})\n` +
          "  Object.defineProperty(module.exports, key, { enumerable: true, get: () => load()[key] })\n",
        loader: "js"
      }
    })
  }
})
