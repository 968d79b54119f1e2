// Builds the startup-snapshot experiment (docs/startup-snapshot.md) into packages/cli/dist/snapshot/:
//   heavy.cjs / heavy.blob   step 1: effect, zod, ai, the provider and core, one CJS bundle and its snapshot
//   lathe-run.cjs / .blob    step 2: the whole `lathe run` path as one CJS bundle and its snapshot
// and beside each blob `<name>-nocc.blob`, the same snapshot without V8's code cache.
// `node scripts/snapshot/build.mjs [heavy|run]...` (default: both). Uses the CLI bundle's esbuild options, as one
// CommonJS file without code splitting, since a snapshot entry is a single script that may require only built-ins.
import { execFileSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import { bundleOptions } from "../bundle.mjs"
import { lazyBuiltins } from "./lazy-builtins.mjs"

const here = dirname(fileURLToPath(import.meta.url))
const outdir = join(here, "../../dist/snapshot")

/** The CLI's bundle options, turned into one CommonJS script a snapshot can start from. */
const snapshotOptions = (entry, outfile, extra = {}) => {
  const {
    entryPoints: _entries,
    outdir: _outdir,
    splitting: _splitting,
    banner: _banner,
    ...rest
  } = bundleOptions({
    entryPoints: [],
    outdir
  })
  return {
    ...rest,
    entryPoints: [entry],
    outfile,
    format: "cjs",
    ...extra,
    plugins: [lazyBuiltins(), ...rest.plugins, ...(extra.plugins ?? [])],
    define: { ...rest.define, ...(extra.define ?? {}) }
  }
}

/** Bundles `entry` to `<name>.cjs` and builds `<name>.blob` from it; returns both paths and the times taken. */
const buildOne = async (name, entry, extra) => {
  mkdirSync(outdir, { recursive: true })
  const script = join(outdir, `${name}.cjs`)
  const blob = join(outdir, `${name}.blob`)
  const t0 = performance.now()
  const result = await build(snapshotOptions(entry, script, extra))
  const t1 = performance.now()
  execFileSync(process.execPath, ["--snapshot-blob", blob, "--build-snapshot", script], { stdio: "inherit" })
  const t2 = performance.now()
  // The same snapshot without V8's code cache (smaller blob; functions compile lazily after restore).
  const config = join(outdir, `${name}-nocc.json`)
  writeFileSync(config, JSON.stringify({ builder: script, withoutCodeCache: true }))
  execFileSync(
    process.execPath,
    ["--snapshot-blob", join(outdir, `${name}-nocc.blob`), "--build-snapshot-config", config],
    {
      stdio: "inherit"
    }
  )
  const bytes = Object.values(result.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0)
  process.stderr.write(
    `snapshot ${name}: bundle ${(bytes / 1024).toFixed(0)} KiB in ${(t1 - t0).toFixed(0)} ms, blob in ${(t2 - t1).toFixed(0)} ms\n`
  )
  return { script, blob }
}

const targets = process.argv.slice(2)
const wanted = (name) => targets.length === 0 || targets.includes(name)
if (wanted("heavy")) await buildOne("heavy", join(here, "heavy-entry.ts"))
if (wanted("run")) {
  const { runBuildOptions } = await import("./run-options.mjs")
  await buildOne("lathe-run", join(here, "run-entry.ts"), runBuildOptions)
}
