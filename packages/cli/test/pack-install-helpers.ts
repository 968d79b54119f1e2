import { spawn } from "node:child_process"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { builtinModules } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

/** The monorepo's root. */
export const repo = fileURLToPath(new URL("../../../", import.meta.url))

/** What builds every package's `dist/` (Nx runs it before this package's tests). */
export const BUILD_COMMAND = "npx nx run @lathe/cli:build"

/** The parts of a package.json these tests read. */
export interface Manifest {
  readonly name: string
  readonly private?: boolean
  readonly exports?: Readonly<Record<string, string | Readonly<Record<string, string>>>>
  readonly bin?: Readonly<Record<string, string>>
  readonly dependencies?: Readonly<Record<string, string>>
  readonly peerDependencies?: Readonly<Record<string, string>>
  readonly devDependencies?: Readonly<Record<string, string>>
}

/** Reads `<dir>/package.json` (a repo-relative or absolute dir). */
export const manifest = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(repo, dir, "package.json"), "utf8")) as Manifest

/** The published packages, by repo-relative folder: every workspace under `packages/` and `plugins/` not private. */
export const PACKAGES: ReadonlyArray<string> = ["packages", "plugins"]
  .flatMap((parent) => readdirSync(join(repo, parent)).map((name) => `${parent}/${name}`))
  .filter((dir) => existsSync(join(repo, dir, "package.json")) && manifest(dir).private !== true)
  .sort()

/**
 * What a consumer's Node loads: the `import` target of every export (not `./package.json`), and every bin (for a shell
 * launcher such as the CLI's bin/lathe, the scripts beside it that it runs, `"$here/lathe.js"`).
 */
export const runtimeEntries = (pkg: Manifest, dir = ""): Array<string> => {
  const targets = Object.entries(pkg.exports ?? {})
    .filter(([key]) => key !== "./package.json")
    .map(([, target]) => (typeof target === "string" ? target : (target.import ?? target.default)))
  const bins = Object.values(pkg.bin ?? {}).flatMap((bin) => {
    if (/\.[cm]?js$/.test(bin)) return [bin]
    const text = readFileSync(join(repo, dir, bin), "utf8")
    return [...text.matchAll(/"\$here\/([\w.-]+\.[cm]?js)"/g)].map(([, name]) => join(dirname(bin), name ?? ""))
  })
  return [...targets, ...bins].filter((target): target is string => target !== undefined)
}

const newestSource = (dir: string): { path: string; mtime: number } => {
  let newest = { path: "", mtime: 0 }
  for (const file of readdirSync(dir, { recursive: true })) {
    const path = join(dir, String(file))
    if (!path.endsWith(".ts")) continue
    const mtime = statSync(path).mtimeMs
    if (mtime > newest.mtime) newest = { path, mtime }
  }
  return newest
}

/**
 * Why a package's build cannot be packed, or undefined when it can: an export (`import` and `types` targets) or a
 * bin is missing from `dist/`, or a source file is newer than the last build (`dist/tsconfig.lib.tsbuildinfo`).
 */
export const buildProblem = (dir: string): string | undefined => {
  const pkg = manifest(dir)
  const root = join(repo, dir)
  for (const target of Object.values(pkg.exports ?? {})) {
    if (typeof target === "string") continue
    for (const condition of ["types", "import"] as const) {
      const file = target[condition]
      if (file !== undefined && !existsSync(join(root, file)))
        return `${pkg.name} has no ${join(dir, file)}: build the packages first with \`${BUILD_COMMAND}\`.`
    }
  }
  for (const file of Object.values(pkg.bin ?? {}))
    if (!existsSync(join(root, file)))
      return `${pkg.name} has no ${join(dir, file)}: build it with \`npx nx run ${pkg.name}:bundle\`.`
  const buildInfo = join(root, "dist/tsconfig.lib.tsbuildinfo")
  if (!existsSync(buildInfo)) return undefined
  const newest = newestSource(join(root, "src"))
  if (newest.mtime > statSync(buildInfo).mtimeMs)
    return `${pkg.name}'s dist/ is older than ${relative(repo, newest.path)}: rebuild with \`${BUILD_COMMAND}\`.`
  return undefined
}

const packageName = (specifier: string): string => {
  const parts = specifier.split("/")
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier)
}

/**
 * The packages a package's built entry points import at run time (statically or with `import("…")`), found by
 * esbuild following `dist/` from each entry; Node built-ins left out. `require.resolve` is not followed.
 */
export const runtimeImports = async (dir: string): Promise<Set<string>> => {
  const root = join(repo, dir)
  const result = await build({
    entryPoints: runtimeEntries(manifest(dir), dir).map((entry) => join(root, entry)),
    bundle: true,
    write: false,
    metafile: true,
    platform: "node",
    format: "esm",
    packages: "external",
    outdir: join(tmpdir(), "lathe-import-scan"), // nothing is written: `write: false`
    logLevel: "silent"
  })
  const imports = new Set<string>()
  for (const input of Object.values(result.metafile.inputs))
    for (const imported of input.imports)
      if (imported.external && !imported.path.startsWith("node:") && !builtinModules.includes(imported.path))
        imports.add(packageName(imported.path))
  return imports
}

/** How a child process ended. */
export interface ChildRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * The environment for npm and node children: this process's, without the `npm_*` variables an enclosing
 * `npm run` sets (they would point npm at the monorepo), keeping the user's registry, cache and proxy settings.
 */
export const childEnv = (): Record<string, string> => {
  const keep = /^npm_config_(registry|cache|userconfig|globalconfig|proxy|https_proxy|noproxy|strict_ssl|cafile|ca)$/i
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && (!/^npm_/i.test(entry[0]) || keep.test(entry[0]))
    )
  )
}

/**
 * Runs a command and collects its output; kills it after `timeoutMs` and rejects with `hint`, the command and
 * the end of its output, so a registry that does not answer fails the test instead of hanging it.
 */
export const runChild = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly timeoutMs: number; readonly hint: string }
): Promise<ChildRun> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: childEnv(), stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(
        new Error(
          `\`${command} ${args.join(" ")}\` did not finish in ${options.timeoutMs / 1000} s. ${options.hint}\n` +
            `stderr (end):\n${stderr.slice(-2000)}`
        )
      )
    }, options.timeoutMs)
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(new Error(`Could not start \`${command}\`: ${error.message}. ${options.hint}`))
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

/** The first ```js block after the heading `## <heading>` of a markdown file. */
export const readmeProgram = (file: string, heading: string): string => {
  const text = readFileSync(file, "utf8")
  const start = text.indexOf(`## ${heading}\n`)
  const block = start < 0 ? null : /```js\n([\s\S]*?)```/.exec(text.slice(start))
  if (block?.[1] === undefined) throw new Error(`${file} has no \`\`\`js block under "## ${heading}".`)
  return block[1]
}
