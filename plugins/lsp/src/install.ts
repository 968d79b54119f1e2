/**
 * Installing an npm-provided server into Lathe's data folder, as a process of its own that outlives the Lathe that
 * started it: a `lathe run` (a script, CI) often ends long before npm does, and an install stopped at exit would start
 * over on every run and never finish. One install per server at a time, across every Lathe on the machine: a lock file
 * next to the install folder holds the installer's pid; a lock whose process is gone (or that is too old to be an
 * install's) is taken over.
 */
import { spawn } from "node:child_process"
import {
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync
} from "node:fs"
import { dirname } from "node:path"
import { installDir } from "./servers.js"

/** Where one server's install lives: the folder, its lock, and the installer's log. */
export interface InstallPaths {
  readonly dir: string
  readonly lock: string
  readonly log: string
}

export const installPaths = (dataDir: string, name: string): InstallPaths => {
  const dir = installDir(dataDir, name)
  return { dir, lock: `${dir}.lock`, log: `${dir}.install.log` }
}

/** How long npm may take before the installer gives up (and the installer itself, for a lock's age). */
export const INSTALL_TIMEOUT_MS = 300_000
/** A lock older than this is stale whatever pid it names: that pid was reused by another process. */
const LOCK_MAX_AGE_MS = INSTALL_TIMEOUT_MS + 60_000
/** A lock just created may not hold its pid yet. */
const LOCK_WRITE_GRACE_MS = 5_000

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * The pid of the live install holding `lock`; `undefined` when there is no lock or it is stale. `0` for a lock so
 * new that its pid is not written yet.
 */
export const lockHolder = (lock: string, now = Date.now()): number | undefined => {
  let text: string
  let age: number
  try {
    age = now - statSync(lock).mtimeMs
    text = readFileSync(lock, "utf8")
  } catch {
    return undefined
  }
  if (age > LOCK_MAX_AGE_MS) return undefined
  const pid = Number(text.trim())
  if (Number.isInteger(pid) && pid > 0) return alive(pid) ? pid : undefined
  return age < LOCK_WRITE_GRACE_MS ? 0 : undefined
}

/**
 * Takes the lock for this process; the pid of the install already holding it otherwise. A stale lock is moved aside
 * (rename is atomic: of two takers only one moves it) and the move undone when what was moved turns out to be a live
 * lock another taker made in between.
 */
const acquire = (lock: string): { readonly taken: true } | { readonly holder: number } => {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      writeFileSync(lock, `${process.pid}\n`, { flag: "wx" })
      return { taken: true }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
    const holder = lockHolder(lock)
    if (holder !== undefined) return { holder }
    const aside = `${lock}.stale-${process.pid}`
    try {
      renameSync(lock, aside)
    } catch {
      continue
    }
    const moved = lockHolder(aside)
    if (moved !== undefined) {
      // Someone took the stale lock over first: put theirs back (a link fails if a lock is there again).
      try {
        linkSync(aside, lock)
      } catch {
        // A third taker made a lock meanwhile; it is theirs.
      }
      rmSync(aside, { force: true })
      return { holder: moved }
    }
    rmSync(aside, { force: true })
  }
  return { holder: lockHolder(lock) ?? 0 }
}

/**
 * The installer, run by node as a process of its own: npm installs the packages into a folder beside the final one,
 * which is renamed into place only once the server's program is there, so no Lathe ever finds a half-installed
 * server. Leftovers of installers that were killed (their pid is gone) are removed first; the lock is released last,
 * when it is still this installer's. Plain CommonJS: it runs with `node -e`, outside any bundle.
 */
const INSTALLER = `
const { spawnSync } = require("node:child_process")
const fs = require("node:fs")
const path = require("node:path")
const [dir, lock, program, timeout, ...packages] = process.argv.slice(1)
const partial = dir + ".partial-" + process.pid
const say = (message) => console.log(new Date().toISOString() + " " + message)
const alive = (pid) => { try { process.kill(pid, 0); return true } catch (error) { return error.code === "EPERM" } }
let ok = false
try {
  const prefix = path.basename(dir) + ".partial-"
  for (const name of fs.readdirSync(path.dirname(dir)))
    if (name.startsWith(prefix) && !alive(Number(name.slice(prefix.length))))
      fs.rmSync(path.join(path.dirname(dir), name), { recursive: true, force: true })
  fs.mkdirSync(partial, { recursive: true })
  // A package.json of its own, so npm installs here and not into a project above the data folder.
  fs.writeFileSync(path.join(partial, "package.json"), '{ "name": "lathe-lsp-server", "private": true }\\n')
  say("installer " + process.pid + ": npm install " + packages.join(" ") + " in " + partial)
  const npm = spawnSync(
    "npm",
    ["install", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error", ...packages],
    { cwd: partial, stdio: ["ignore", "inherit", "inherit"], timeout: Number(timeout), killSignal: "SIGKILL",
      shell: process.platform === "win32" }
  )
  if (npm.error) throw npm.error
  if (npm.status !== 0) throw new Error("npm exited with " + (npm.signal ?? "code " + npm.status))
  const bin = path.join(partial, "node_modules", ".bin", program)
  if (!fs.existsSync(bin) && !fs.existsSync(bin + ".cmd")) throw new Error("npm installed no " + program)
  fs.rmSync(dir, { recursive: true, force: true })
  fs.renameSync(partial, dir)
  ok = true
  say("installed into " + dir)
} catch (error) {
  say("failed: " + (error && error.message ? error.message : String(error)))
} finally {
  fs.rmSync(partial, { recursive: true, force: true })
  try {
    if (fs.readFileSync(lock, "utf8").trim() === String(process.pid)) fs.rmSync(lock, { force: true })
  } catch {}
}
process.exitCode = ok ? 0 : 1
`

/**
 * The Node that runs the installer: Lathe's own, except in a single executable (`process.execPath` is Lathe there),
 * where it is the `node` on PATH, the one npm needs anyway.
 */
const node = (): string => (process.getBuiltinModule("node:sea")?.isSea() === true ? "node" : process.execPath)

/** An install this process started, or the one another process runs. */
export type InstallStart =
  | { readonly started: true; readonly pid: number | undefined; readonly exited: Promise<void> }
  | { readonly started: false; readonly holder: number }

/**
 * Starts the install of `packages` (providing `program`) into `paths.dir` in the background, unless one runs already.
 * The installer is detached (its own process group, no terminal, output to `paths.log`) and not waited for: it goes
 * on after this process exits.
 */
export const startInstall = (options: {
  readonly paths: InstallPaths
  readonly program: string
  readonly packages: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string | undefined>>
}): InstallStart => {
  const { paths } = options
  mkdirSync(dirname(paths.dir), { recursive: true })
  const lock = acquire(paths.lock)
  if ("holder" in lock) return { started: false, holder: lock.holder }
  let log: number | undefined
  try {
    log = openSync(paths.log, "w")
    const child = spawn(
      node(),
      ["-e", INSTALLER, paths.dir, paths.lock, options.program, String(INSTALL_TIMEOUT_MS), ...options.packages],
      { cwd: dirname(paths.dir), env: options.env, detached: true, stdio: ["ignore", log, log], windowsHide: true }
    )
    const exited = new Promise<void>((done) => {
      child.once("error", () => done())
      child.once("exit", () => done())
    })
    if (child.pid === undefined) rmSync(paths.lock, { force: true })
    else writeFileSync(paths.lock, `${child.pid}\n`)
    child.unref()
    return { started: true, pid: child.pid, exited }
  } catch (error) {
    rmSync(paths.lock, { force: true })
    throw error
  } finally {
    if (log !== undefined) closeSync(log)
  }
}

/** The last lines of an install's log, for a notice. */
export const logTail = (log: string, chars = 400): string => {
  try {
    return readFileSync(log, "utf8").trim().slice(-chars)
  } catch {
    return ""
  }
}
