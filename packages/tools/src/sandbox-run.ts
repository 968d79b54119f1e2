import { lstatSync, realpathSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import type { SandboxPlan, SandboxSettings } from "./sandbox.js"
import { sandboxArgv } from "./sandbox.js"
import { type SandboxChoice, sandboxPlan } from "./sandbox-plan.js"
import { protectedLayout, restoreProtected } from "./sandbox-protect.js"
import { findSockets } from "./sandbox-sockets.js"

/** Where one sandboxed run happens. */
export interface SandboxedRunPlace {
  /** The project root. */
  readonly root: string
  /** The command's working directory (absolute, real). */
  readonly cwd: string
  /** The OS temp dir the sandbox leaves writable (default `os.tmpdir()`). */
  readonly tempDir?: string | undefined
  /** Lathe's truncation dir, writable in `workspace-write` (default: `tool-output` in the data dir). */
  readonly truncationDir?: string | undefined
  /** The command's environment: the sockets its variables name are hidden (default: this process's). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /** The user's home folder, whose agent folders (`~/.ssh`, `~/.gnupg`, `~/.docker`) are searched for sockets. */
  readonly home?: string | undefined
}

/** One run inside the sandbox: its plan, the argv wrapper and the check after it. */
export interface SandboxedRun {
  /** What the command may touch. */
  readonly plan: SandboxPlan
  /** Turns the command's argv into the sandbox program's argv. */
  readonly wrap: (argv: readonly [string, ReadonlyArray<string>]) => readonly [string, ReadonlyArray<string>]
  /**
   * Call once the command has exited (bubblewrap's PID namespace has ended every process it started by then): removes
   * protected paths the command created and restores protected links it replaced. Resolves with one note per change,
   * written for the model, to add to the result; never rejects.
   */
  readonly after: () => Promise<ReadonlyArray<string>>
}

const realOr = (path: string): string => {
  try {
    return realpathSync.native(path)
  } catch {
    return path
  }
}

/**
 * Everything one sandboxed run needs, for the bash tool and any other runner of commands (formatters, plugin
 * commands): the folders it may write (`settings.mode`), the protected paths inside the project (`protectedPathOf`'s
 * list, `@lathe/core`: existing ones read-only, `.git` pinned against moving or replacing, missing ones checked by
 * `after`), the sockets outside the project hidden, and a sandbox without privilege (a user namespace, no
 * capabilities, even as root). `choice` is an available sandbox (`chooseSandbox`). Costs a few `lstat`s and small
 * directory reads (the temp dir, /run), a few milliseconds.
 */
export const prepareSandboxedRun = (
  settings: SandboxSettings,
  choice: Extract<SandboxChoice, { readonly state: "on" }>,
  place: SandboxedRunPlace
): SandboxedRun => {
  const root = realOr(place.root)
  const base = sandboxPlan(settings, place)
  const layout = base.mode === "workspace-write" ? protectedLayout(root, place.cwd) : undefined
  const sockets = findSockets({
    env: place.env ?? process.env,
    tempDir: place.tempDir ?? tmpdir(),
    root,
    keep: [root, place.cwd, ...base.writable],
    home: place.home ?? homedir()
  })
  const plan: SandboxPlan = {
    ...base,
    readOnly: [...base.readOnly, ...(layout?.readOnly ?? [])],
    pinned: layout?.pinned ?? [],
    absent: layout?.absent ?? [],
    hiddenSockets: sockets.sockets,
    hiddenFolders: sockets.folders,
    ...(choice.disableUserns === false ? { disableUserns: false } : {})
  }
  return {
    plan,
    wrap: (argv) => {
      // A socket or folder that vanished since the scan would make bwrap fail to create its mount point.
      const still = (path: string) => lstatSync(path, { throwIfNoEntry: false }) !== undefined
      const now = {
        ...plan,
        hiddenSockets: sockets.sockets.filter(still),
        hiddenFolders: sockets.folders.filter(still)
      }
      return sandboxArgv(choice.kind, choice.program, now, argv)
    },
    after: async () => {
      if (!layout) return []
      try {
        return restoreProtected(root, layout)
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error)
        return [`Lathe could not check the protected paths after the command (${reason}); tell the user.`]
      }
    }
  }
}
