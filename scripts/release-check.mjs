#!/usr/bin/env node
// npm run release:check   Packs every public @lathe/* package (as `changeset publish` would: `npm pack` runs the
// CLI's prepack, which builds its bundle) and checks each tarball: LICENSE and README, the built JavaScript and .d.ts
// its package.json points at (exports, main, types, bin), no tests or build leftovers, no path of this machine, the
// repository fields, and every @lathe/* dependency pinned to the exact version a sibling tarball has. The packages
// must be built first (`npx nx run-many -t build`); scripts/test runs this after its build.
//   --keep DIR     write the tarballs to DIR and keep them
//   --no-prepack   pack without running the CLI's prepack (its bundle): for a run right after the build made it
// Imported, it exports `packAll` and `checkPacked` for the tests.
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

/** The monorepo's root. */
export const repo = fileURLToPath(new URL("../", import.meta.url))

/** The public workspace packages, as repo-relative folders (every workspace under packages/ and plugins/ not private). */
export const publicPackages = () =>
  ["packages", "plugins"]
    .flatMap((parent) => readdirSync(join(repo, parent)).map((name) => `${parent}/${name}`))
    .filter((dir) => existsSync(join(repo, dir, "package.json")))
    .filter((dir) => JSON.parse(readFileSync(join(repo, dir, "package.json"), "utf8")).private !== true)
    .sort()

/**
 * Packs every public package into `dest` with one `npm pack` (the CLI's prepack builds its bundle, unless
 * `ignoreScripts`: then the bundle must be built already) and extracts each tarball to
 * `dest/<tarball name without .tgz>/package/`. Returns one record per package: name, version, tarball path, extracted
 * folder, file list and the packed manifest. Throws with npm's output when packing fails.
 */
export const packAll = (dest, { ignoreScripts = false } = {}) => {
  mkdirSync(dest, { recursive: true })
  const workspaces = publicPackages().flatMap((dir) => ["-w", dir])
  const args = [
    "pack",
    "--json",
    "--pack-destination",
    dest,
    ...(ignoreScripts ? ["--ignore-scripts"] : []),
    ...workspaces
  ]
  const pack = spawnSync("npm", args, {
    cwd: repo,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_(package|lifecycle)_/i.test(key)))
  })
  if (pack.status !== 0) throw new Error(`npm pack failed (exit ${pack.status}):\n${(pack.stderr ?? "").slice(-4000)}`)
  const results = JSON.parse(pack.stdout)
  return results.map((result) => {
    const tarball = join(dest, result.filename)
    const dir = join(dest, result.filename.replace(/\.tgz$/, ""))
    mkdirSync(dir, { recursive: true })
    const tar = spawnSync("tar", ["-xzf", tarball, "-C", dir], { encoding: "utf8" })
    if (tar.status !== 0) throw new Error(`tar could not extract ${tarball}: ${tar.stderr}`)
    const root = join(dir, "package")
    return {
      name: result.name,
      version: result.version,
      tarball,
      root,
      files: result.files.map((file) => file.path),
      manifest: JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
    }
  })
}

/** Every file path an exports map, `main`, `types` and `bin` name (not `./package.json`). */
const pointedFiles = (manifest) => {
  const targets = []
  const walk = (value) => {
    if (typeof value === "string") targets.push(value)
    else if (value !== null && typeof value === "object") for (const inner of Object.values(value)) walk(inner)
  }
  for (const [key, target] of Object.entries(manifest.exports ?? {})) {
    if (key === "./package.json") continue
    // The `@lathe/source` condition points at TypeScript sources for the monorepo's own tools; consumers never use it.
    if (target !== null && typeof target === "object")
      walk(Object.fromEntries(Object.entries(target).filter(([condition]) => condition !== "@lathe/source")))
    else walk(target)
  }
  walk(manifest.main)
  walk(manifest.types)
  walk(manifest.bin)
  return [...new Set(targets)].map((target) => target.replace(/^\.\//, ""))
}

const TEXT = /\.(js|cjs|mjs|ts|cts|mts|map|json|md|txt)$/

/** Folders of this machine (with their trailing slash) that must not appear in a published file. */
const machinePaths = () => {
  const paths = new Set([`${realpathSync(repo).replace(/\/$/, "")}/`, repo])
  const home = homedir().replace(/\/$/, "")
  if (home !== "") paths.add(`${home}/`)
  return [...paths]
}

/**
 * The problems of packed packages (from `packAll`), as sentences naming the package; empty when every tarball is
 * ready to publish.
 */
export const checkPacked = (packed) => {
  const problems = []
  const versions = new Map(packed.map((pkg) => [pkg.name, pkg.version]))
  const machine = machinePaths()
  for (const pkg of packed) {
    const say = (what) => problems.push(`${pkg.name}: ${what}`)
    const files = new Set(pkg.files)
    for (const required of ["LICENSE", "README.md", "package.json"])
      if (!files.has(required)) say(`the tarball has no ${required}`)
    const m = pkg.manifest
    if (m.license !== "MIT") say(`package.json's license is ${JSON.stringify(m.license)}, not "MIT"`)
    for (const field of ["repository", "homepage", "bugs"])
      if (m[field] === undefined) say(`package.json has no ${field}`)
    for (const file of pointedFiles(m))
      if (!files.has(file)) say(`package.json points at ${file}, which is not in the tarball`)
    if (![...files].some((file) => /\.(js|cjs|mjs)$/.test(file))) say("the tarball has no built JavaScript")
    for (const bin of Object.values(m.bin ?? {})) {
      // A bin that loads the real program (the CLI's start guard imports its bundle): what it imports is shipped. A
      // shell launcher (the CLI's bin/lathe) is followed to the script beside it that it runs (`"$here/lathe.js"`).
      const read = (file) => (files.has(file) ? readFileSync(join(pkg.root, file), "utf8") : "")
      const path = bin.replace(/^\.\//, "")
      const launched = [...read(path).matchAll(/"\$here\/([\w.-]+\.[cm]?js)"/g)].map(([, name]) =>
        join(dirname(path), name)
      )
      for (const file of launched) if (!files.has(file)) say(`${bin} runs ${file}, which is not in the tarball`)
      for (const script of [path, ...launched])
        for (const [, target] of read(script).matchAll(/import\("(\.{1,2}\/[^"]+)"\)/g)) {
          const file = join(dirname(script), target).replace(/^\.\//, "")
          if (!files.has(file))
            say(`${bin} imports ${file}, which is not in the tarball (build it: npx nx run ${pkg.name}:bundle)`)
        }
    }
    if (m.bin === undefined && ![...files].some((file) => file.endsWith(".d.ts")))
      say("the tarball has no .d.ts (a library must ship its types)")
    const leftovers = [...files].filter(
      (file) =>
        /(^|\/)(test|tests|__tests__)\//.test(file) ||
        /\.(test|spec)\.[cm]?[jt]sx?$/.test(file) ||
        file.endsWith(".tsbuildinfo")
    )
    if (leftovers.length > 0) say(`the tarball ships tests or build leftovers: ${leftovers.slice(0, 5).join(", ")}`)
    for (const file of files) {
      if (!TEXT.test(file)) continue
      const text = readFileSync(join(pkg.root, file), "utf8")
      const found = machine.find((path) => text.includes(path))
      if (found !== undefined) say(`${file} contains a path of this machine (${found})`)
    }
    for (const field of ["dependencies", "peerDependencies", "optionalDependencies"]) {
      for (const [name, range] of Object.entries(m[field] ?? {})) {
        if (!name.startsWith("@lathe/")) continue
        const sibling = versions.get(name)
        if (sibling === undefined) say(`${field} names ${name}, which is not a public package of this repository`)
        else if (range !== sibling)
          say(`${field} has ${name}@${JSON.stringify(range)}; it must be the exact version of the sibling (${sibling})`)
      }
    }
  }
  return problems
}

const isMain = () => {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)
  } catch {
    return false
  }
}

if (isMain()) {
  const started = Date.now()
  const keep = process.argv.indexOf("--keep")
  const dest = keep >= 0 ? process.argv[keep + 1] : mkdtempSync(join(tmpdir(), "lathe-release-check-"))
  if (dest === undefined) {
    console.error("release:check: --keep needs a folder")
    process.exit(2)
  }
  try {
    const packed = packAll(dest, { ignoreScripts: process.argv.includes("--no-prepack") })
    const problems = checkPacked(packed)
    for (const pkg of packed) {
      const size = statSync(pkg.tarball).size
      console.log(`${pkg.name}@${pkg.version}  ${pkg.files.length} files  ${(size / 1024).toFixed(0)} KiB`)
    }
    if (problems.length > 0) {
      for (const problem of problems) console.error(`release:check: ${problem}`)
      console.error(`release:check: ${problems.length} problem(s) in ${packed.length} tarballs`)
      process.exitCode = 1
    } else {
      const seconds = ((Date.now() - started) / 1000).toFixed(1)
      console.log(`release:check: ${packed.length} tarballs ready to publish (${seconds} s)`)
      if (keep >= 0) console.log(`release:check: tarballs in ${relative(process.cwd(), dest) || "."}`)
    }
  } finally {
    if (keep < 0) rmSync(dest, { recursive: true, force: true })
  }
}
