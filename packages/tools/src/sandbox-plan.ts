import { mkdirSync, realpathSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { isAbsolute, relative, sep } from "node:path"
import { renderSnippet } from "@lathe/plugin"
import { toolsConfigAdvice } from "./config-advice.js"

/**
 * What the sandbox lets a command write: `workspace-write` the project root, the OS temp dir and Lathe's
 * truncation dir; `read-only` only the OS temp dir; `off` runs commands without a sandbox.
 */
export type SandboxMode = "workspace-write" | "read-only" | "off"

/** The `sandbox` config, as `@lathe/core`'s config schema outputs it (the string shorthand already expanded). */
export interface SandboxSettings {
  /** Default `workspace-write`. */
  readonly mode?: SandboxMode
  /**
   * Whether commands may use the network (default false): `true` opens it whole; a list of hosts opens only those,
   * through Lathe's proxy (`sandbox-proxy.ts`; bubblewrap only, elsewhere a list leaves the network closed).
   */
  readonly network?: boolean | ReadonlyArray<string>
  /** Refuse to run bash when no sandbox is available (default false: run it under the permission rules alone). */
  readonly required?: boolean
}

/** Which sandbox this machine offers. `kind: "none"` carries the reason, for the notice and `lathe doctor`. */
export interface SandboxAvailability {
  readonly kind: "bubblewrap" | "seatbelt" | "none"
  /** The sandbox program (`bwrap`, `sandbox-exec`). */
  readonly path?: string
  /** e.g. "bubblewrap 0.8.0". */
  readonly version?: string
  /** Why there is no sandbox, with what to do about it. */
  readonly reason?: string
  /** bubblewrap: whether it takes `--disable-userns` (0.8.0+); older ones run without it. */
  readonly disableUserns?: boolean
}

/** Finds the sandbox of this machine; injectable so tests can simulate a machine without one. */
export type SandboxDetector = () => Promise<SandboxAvailability>

/** What one sandboxed run may touch. Paths are absolute and real (symlinks resolved). */
export interface SandboxPlan {
  readonly mode: Exclude<SandboxMode, "off">
  /** The whole network is open (`sandbox.network: true`); otherwise only loopback, plus `allowHosts` when given. */
  readonly network: boolean
  /** With the network closed: hosts reached through Lathe's proxy (`sandbox.network` as a list; bubblewrap only). */
  readonly allowHosts?: ReadonlyArray<string>
  /** Folders the command may write; each must exist. */
  readonly writable: ReadonlyArray<string>
  /** Folders kept read-only even inside a writable one (the project in `read-only` mode, when it lies in the temp dir). */
  readonly readOnly: ReadonlyArray<string>
  /** The command's working directory, kept inside the sandbox. */
  readonly cwd: string
  /** Folders bound onto themselves: writable inside, but a command cannot move, remove or replace them (`.git`). */
  readonly pinned?: ReadonlyArray<string>
  /**
   * Protected paths that do not exist yet: the command must not create them. Seatbelt denies it; bubblewrap cannot
   * bind a missing path, so `prepareSandboxedRun`'s `after` removes what the command created.
   */
  readonly absent?: ReadonlyArray<string>
  /** Sockets hidden from the command (bwrap binds an empty device over each), so it reaches no server outside. */
  readonly hiddenSockets?: ReadonlyArray<string>
  /** Folders of sockets hidden under an empty tmpfs (`/run/user`, `$XDG_RUNTIME_DIR`, `/tmp/tmux-*`, …). */
  readonly hiddenFolders?: ReadonlyArray<string>
  /** Keep the command from creating user namespaces (bwrap `--disable-userns`, bubblewrap 0.8.0+); default true. */
  readonly disableUserns?: boolean
  /** The project folder left writable (`workspace-write`): the root, or less when the root was too wide. */
  readonly project?: string
  /** The project root that was too wide to bind writable (`/`, the home folder or above it), when it was. */
  readonly narrowedFrom?: string
  /** bubblewrap loads the seccomp filter it reads from this file descriptor (`--seccomp`; see `sandbox-seccomp.ts`). */
  readonly seccompFd?: number
}

/** What the sandbox blocked, judged from a failed command's output. */
export type SandboxBlock = "write" | "network" | "socket" | "proxy"

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

const within = (parent: string, child: string): boolean => {
  const rel = relative(parent, child)
  return rel === "" || (!isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${sep}`))
}

/**
 * Whether binding `dir` writable would hand the command the whole machine or the person's home: `/`, the home folder
 * or any folder above it (their shell start-up files, `~/.ssh`, their own Lathe config). Real paths.
 */
export const tooWideToWrite = (dir: string, home: string): boolean => dir === "/" || within(dir, home)

/**
 * The folders a sandboxed command may write and where it runs. `workspace-write`: the project root, the OS temp dir
 * and, when given, Lathe's truncation dir (the host's `ctx.truncationDir`; created when missing); `read-only`: the OS
 * temp dir only, with the project kept read-only even when it lies inside the temp dir. Missing paths are left out
 * (bwrap cannot bind them). Whatever the project root is, `/`, the home folder and the folders above it are never
 * writable ({@link tooWideToWrite}): such a root is narrowed to the working directory when that is below it and not
 * too wide itself, else to nothing (`narrowedFrom` names the refused root, `project` what is left). The protected
 * paths inside a writable project and the hidden sockets are added by `prepareSandboxedRun`.
 */
export const sandboxPlan = (
  settings: SandboxSettings,
  where: {
    readonly root: string
    readonly cwd: string
    readonly tempDir?: string | undefined
    readonly truncationDir?: string | undefined
    /** The person's home folder (default `os.homedir()`). */
    readonly home?: string | undefined
  }
): SandboxPlan => {
  const mode = settings.mode === "read-only" ? "read-only" : "workspace-write"
  const temp = where.tempDir ?? tmpdir()
  const home = real(where.home ?? homedir()) ?? where.home ?? homedir()
  const root = real(where.root) ?? where.root
  const cwd = real(where.cwd) ?? where.cwd
  const narrowed = tooWideToWrite(root, home)
  const project = !narrowed ? root : within(root, cwd) && !tooWideToWrite(cwd, home) ? cwd : undefined
  const candidates = [temp]
  if (mode === "workspace-write") {
    const truncation = where.truncationDir
    if (truncation !== undefined)
      try {
        mkdirSync(truncation, { recursive: true })
      } catch {
        // Unwritable data dir: the command simply cannot write there.
      }
    if (project !== undefined) candidates.unshift(project)
    if (truncation !== undefined) candidates.push(truncation)
  }
  const existing = (paths: ReadonlyArray<string>) => [
    ...new Set(paths.map(real).filter((path): path is string => path !== undefined))
  ]
  const writable = existing(candidates).filter((dir) => !tooWideToWrite(dir, home))
  const readOnly = existing(mode === "read-only" ? [where.root] : [])
  return {
    mode,
    network: settings.network === true,
    ...(Array.isArray(settings.network) && settings.network.length > 0 ? { allowHosts: settings.network } : {}),
    writable,
    readOnly,
    cwd: where.cwd,
    ...(mode === "workspace-write" && project !== undefined ? { project } : {}),
    ...(narrowed ? { narrowedFrom: root } : {})
  }
}

/** What the model is told when the project root was too wide to bind writable ({@link sandboxPlan}). */
export const narrowedText = (plan: SandboxPlan): string | undefined =>
  plan.narrowedFrom === undefined
    ? undefined
    : `The project root ${plan.narrowedFrom} is / or the home folder or above it, which the sandbox never leaves ` +
      `writable; ${plan.project === undefined ? "no project folder is" : `only ${plan.project} is`} writable for this command.`

/** One line naming the sandbox and what it allows, for tool results. */
export const describeSandbox = (kind: "bubblewrap" | "seatbelt", plan: SandboxPlan): string =>
  `the ${kind} sandbox (${plan.mode}: writes only to ${plan.writable.join(", ") || "nowhere"}` +
  `${plan.readOnly.length > 0 ? ` except ${plan.readOnly.join(", ")}` : ""}; ${networkText(plan)})`

/** The network part of {@link describeSandbox}. */
const networkText = (plan: Pick<SandboxPlan, "network" | "allowHosts">): string =>
  plan.network
    ? "network allowed"
    : plan.allowHosts
      ? `network closed except ${plan.allowHosts.join(", ")} through Lathe's proxy`
      : "network closed"

/** How a person opens the network, for the model to pass on. */
const OPEN_NETWORK =
  "To allow it, the user can approve the rerun outside the sandbox (sandbox_escape), or open the network in their " +
  "own config (~/.config/lathe/lathe.json) or a trusted project's lathe.json: merge " +
  `${renderSnippet(toolsConfigAdvice.sandboxNetwork(true))} for all of it, or a list of hosts such as ` +
  renderSnippet(toolsConfigAdvice.sandboxNetwork(["registry.npmjs.org"]))

/**
 * Why the sandbox stopped a command, in words for the model and the person; for the network, with how the person
 * opens it (and, with an allow-list, what it holds).
 */
export const blockText = (block: SandboxBlock, plan?: Pick<SandboxPlan, "network" | "allowHosts">): string =>
  block === "write"
    ? "it tried to write outside the folders the sandbox leaves writable (Read-only file system)"
    : block === "socket"
      ? "it tried to open a Unix socket (Permission denied), which the sandbox refuses while the network is closed"
      : block === "proxy"
        ? "it tried to reach a host that sandbox.network does not list, and Lathe's proxy refused it (403). " +
          `The sandbox reaches only ${plan?.allowHosts?.join(", ") ?? "the listed hosts"}. ${OPEN_NETWORK}`
        : plan?.allowHosts
          ? "it needs the network, which the sandbox keeps closed except for " +
            `${plan.allowHosts.join(", ")}, reached only through Lathe's proxy by programs that use HTTP_PROXY/` +
            `HTTPS_PROXY (there is no DNS inside the sandbox). ${OPEN_NETWORK}`
          : `it needs the network, which the sandbox keeps closed (name lookups and connections fail at once). ${OPEN_NETWORK}`
