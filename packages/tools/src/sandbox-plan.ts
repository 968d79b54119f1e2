import { mkdirSync, realpathSync } from "node:fs"
import { tmpdir } from "node:os"
import { dataDir, truncationDir } from "@lathe/core"
import type { SandboxBlock, SandboxDetector, SandboxPlan, SandboxSettings } from "./sandbox.js"

/** The sandbox one bash call gets: none by choice, none on this machine, or one that is available. */
export type SandboxChoice =
  | { readonly state: "off" }
  | { readonly state: "missing"; readonly reason: string }
  | {
      readonly state: "on"
      readonly kind: "bubblewrap" | "seatbelt"
      readonly program: string
      /** bubblewrap takes `--disable-userns` (0.8.0+). */
      readonly disableUserns?: boolean
    }

/**
 * Decides the sandbox for a call. `required` turns "no sandbox" (a machine without one, or `mode: "off"`, e.g. a
 * global `"off"` narrowed by a project's `"required"`) into a thrown error whose message the model reads.
 */
export const chooseSandbox = async (settings: SandboxSettings, detect: SandboxDetector): Promise<SandboxChoice> => {
  const refuse = (why: string) =>
    new Error(
      `bash is refused: the config sets sandbox to "required" and ${why}. Tell the user; they can install ` +
        'bubblewrap (Debian/Ubuntu: apt install bubblewrap) or change "sandbox" in lathe.json.'
    )
  if (settings.mode === "off") {
    if (settings.required) throw refuse('also sets its mode to "off"')
    return { state: "off" }
  }
  const availability = await detect()
  if (availability.kind === "none" || !availability.path) {
    const reason = availability.reason ?? "no sandbox was found"
    if (settings.required) throw refuse(`no sandbox is available on this machine: ${reason}`)
    return { state: "missing", reason }
  }
  return {
    state: "on",
    kind: availability.kind,
    program: availability.path,
    ...(availability.disableUserns === false ? { disableUserns: false } : {})
  }
}

const real = (path: string): string | undefined => {
  try {
    return realpathSync.native(path)
  } catch {
    return undefined
  }
}

/**
 * The folders a sandboxed command may write and where it runs. `workspace-write`: the project root, the OS temp dir
 * and Lathe's truncation dir (created when missing); `read-only`: the OS temp dir only, with the project kept
 * read-only even when it lies inside the temp dir. Missing paths are left out (bwrap cannot bind them). The protected
 * paths inside a writable project and the hidden sockets are added by `prepareSandboxedRun`.
 */
export const sandboxPlan = (
  settings: SandboxSettings,
  where: {
    readonly root: string
    readonly cwd: string
    readonly tempDir?: string | undefined
    readonly truncationDir?: string | undefined
  }
): SandboxPlan => {
  const mode = settings.mode === "read-only" ? "read-only" : "workspace-write"
  const temp = where.tempDir ?? tmpdir()
  const candidates = [temp]
  if (mode === "workspace-write") {
    const truncation = where.truncationDir ?? truncationDir(dataDir())
    try {
      mkdirSync(truncation, { recursive: true })
    } catch {
      // Unwritable data dir: the command simply cannot write there.
    }
    candidates.unshift(where.root)
    candidates.push(truncation)
  }
  const existing = (paths: ReadonlyArray<string>) => [
    ...new Set(paths.map(real).filter((path): path is string => path !== undefined))
  ]
  const readOnly = existing(mode === "read-only" ? [where.root] : [])
  return { mode, network: settings.network === true, writable: existing(candidates), readOnly, cwd: where.cwd }
}

/** One line naming the sandbox and what it allows, for tool results. */
export const describeSandbox = (kind: "bubblewrap" | "seatbelt", plan: SandboxPlan): string =>
  `the ${kind} sandbox (${plan.mode}: writes only to ${plan.writable.join(", ") || "nowhere"}` +
  `${plan.readOnly.length > 0 ? ` except ${plan.readOnly.join(", ")}` : ""}; network ${plan.network ? "allowed" : "closed"})`

/** Why the sandbox stopped a command, in words for the model and the person. */
export const blockText = (block: SandboxBlock): string =>
  block === "write"
    ? "it tried to write outside the folders the sandbox leaves writable (Read-only file system)"
    : "it needs the network, which the sandbox keeps closed"
