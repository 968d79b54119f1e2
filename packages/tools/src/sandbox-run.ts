import { lstatSync, realpathSync } from "node:fs"
import { Socket } from "node:net"
import { homedir, tmpdir } from "node:os"
import type { SandboxPlan, SandboxSettings } from "./sandbox.js"
import { sandboxArgv } from "./sandbox.js"
import { narrowedText, type SandboxChoice, sandboxPlan } from "./sandbox-plan.js"
import { protectedLayout, restoreProtected } from "./sandbox-protect.js"
import { noProxyFor, parseAllowList, serveProxyConnection } from "./sandbox-proxy.js"
import { FORWARDER_SOURCE } from "./sandbox-proxy-forwarder.js"
import { unixSocketFilter } from "./sandbox-seccomp.js"
import { findSockets } from "./sandbox-sockets.js"

/** Where one sandboxed run happens. */
export interface SandboxedRunPlace {
  /** The project root. */
  readonly root: string
  /** The command's working directory (absolute, real). */
  readonly cwd: string
  /** The OS temp dir the sandbox leaves writable (default `os.tmpdir()`). */
  readonly tempDir?: string | undefined
  /** Lathe's truncation dir (`ctx.truncationDir`), writable in `workspace-write` (default: none writable). */
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
  /**
   * Bytes the sandbox program reads from file descriptors 3, 4, … (the seccomp filter when the network is closed):
   * pass them to `runProcess`'s `extraInputs` with the wrapped argv, or the sandbox fails to start.
   */
  readonly extraInputs: ReadonlyArray<Uint8Array>
  /**
   * Variables to set over the command's environment: with the network closed, the retry and time-out settings of
   * common clients, so a network call fails at once instead of retrying for minutes ({@link NETWORK_CLOSED_ENV}).
   */
  readonly env: Readonly<Record<string, string>>
  /**
   * With an allow-list (`sandbox.network` as a list of hosts, bubblewrap): the handler of the forwarder's IPC channel;
   * pass it to `runProcess`'s `onMessage`, which opens the channel the forwarder inside needs.
   */
  readonly onMessage?: (message: unknown, handle: unknown) => void
  /** Turns the command's argv into the sandbox program's argv. */
  readonly wrap: (argv: readonly [string, ReadonlyArray<string>]) => readonly [string, ReadonlyArray<string>]
  /**
   * Call once the command has exited (bubblewrap's PID namespace has ended every process it started by then): removes
   * protected paths the command created and restores protected links it replaced. Resolves with one note per change,
   * written for the model, to add to the result; never rejects.
   */
  readonly after: () => Promise<ReadonlyArray<string>>
}

/**
 * Set for sandboxed commands while the network is closed, so clients fail at once and say why instead of retrying
 * (npm retried for 70 s before answering `npm view` from a stale cache; pip backs off five times): npm (and pnpm)
 * without retries, pip with one immediate retry (with none it hides the connection error behind "No matching
 * distribution"), cargo without retries.
 */
export const NETWORK_CLOSED_ENV: Readonly<Record<string, string>> = {
  npm_config_fetch_retries: "0",
  npm_config_fetch_timeout: "10000",
  PIP_RETRIES: "1",
  PIP_TIMEOUT: "5",
  PIP_DEFAULT_TIMEOUT: "5",
  CARGO_NET_RETRY: "0",
  CARGO_HTTP_TIMEOUT: "5"
}

/** Whether Lathe runs as a Node single executable application (whose binary does not take `node -e`). */
const isSea = (): boolean => process.getBuiltinModule("node:sea")?.isSea() === true

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
 * list, `protected-paths.ts`: existing ones read-only, `.git` pinned against moving or replacing, missing ones checked by
 * `after`), the sockets outside the project hidden, and a sandbox without privilege (a user namespace, no
 * capabilities, even as root). `choice` is an available sandbox (`chooseSandbox`). Costs a few `lstat`s and small
 * directory reads (the temp dir, /run), a few milliseconds.
 */
export const prepareSandboxedRun = (
  settings: SandboxSettings,
  choice: Extract<SandboxChoice, { readonly state: "on" }>,
  place: SandboxedRunPlace
): SandboxedRun => {
  const home = place.home ?? homedir()
  const base = sandboxPlan(settings, { ...place, home })
  // A root too wide to bind writable (`/`, the home folder) was narrowed: the protected paths and the project's own
  // sockets are those of the folder left writable (none in `read-only`, none when nothing was left).
  const root = base.narrowedFrom === undefined ? realOr(place.root) : base.project
  const layout = base.mode === "workspace-write" && root !== undefined ? protectedLayout(root, place.cwd) : undefined
  const sockets = findSockets({
    env: place.env ?? process.env,
    tempDir: place.tempDir ?? tmpdir(),
    root,
    keep: [...(root === undefined ? [] : [root]), place.cwd, ...base.writable],
    home
  })
  // The kernel refuses AF_UNIX sockets when the network is closed; bubblewrap reads the filter from fd 3.
  const filter = choice.kind === "bubblewrap" && !base.network ? unixSocketFilter() : undefined
  // An allow-list needs the forwarder inside (bubblewrap only: Seatbelt keeps the network closed).
  // A single executable cannot run the forwarder's source with `node -e`: there too the list leaves it closed.
  const { allowHosts, ...closed } = base
  const allow = choice.kind === "bubblewrap" && allowHosts && !isSea() ? parseAllowList(allowHosts) : undefined
  const plan: SandboxPlan = {
    ...closed,
    ...(allow ? { allowHosts } : {}),
    readOnly: [...base.readOnly, ...(layout?.readOnly ?? [])],
    pinned: layout?.pinned ?? [],
    absent: layout?.absent ?? [],
    hiddenSockets: sockets.sockets,
    hiddenFolders: sockets.folders,
    ...(choice.disableUserns === false ? { disableUserns: false } : {}),
    ...(filter ? { seccompFd: 3 } : {})
  }
  const viaForwarder = (argv: readonly [string, ReadonlyArray<string>]): readonly [string, ReadonlyArray<string>] =>
    allow
      ? [
          process.execPath,
          ["--input-type=commonjs", "-e", FORWARDER_SOURCE, JSON.stringify({ argv, noProxy: noProxyFor(allow) })]
        ]
      : argv
  return {
    plan,
    extraInputs: filter ? [filter] : [],
    env: plan.network || allow ? {} : NETWORK_CLOSED_ENV,
    ...(allow
      ? {
          onMessage: (_message: unknown, handle: unknown) => {
            if (handle instanceof Socket) serveProxyConnection(handle, allow)
          }
        }
      : {}),
    wrap: (argv) => {
      // A socket or folder that vanished since the scan would make bwrap fail to create its mount point.
      const still = (path: string) => lstatSync(path, { throwIfNoEntry: false }) !== undefined
      const now = {
        ...plan,
        hiddenSockets: sockets.sockets.filter(still),
        hiddenFolders: sockets.folders.filter(still)
      }
      return sandboxArgv(choice.kind, choice.program, now, viaForwarder(argv))
    },
    after: async () => {
      const narrowed = narrowedText(plan)
      const notes = narrowed === undefined ? [] : [narrowed]
      if (!layout || root === undefined) return notes
      try {
        return [...notes, ...restoreProtected(root, layout)]
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error)
        return [...notes, `Lathe could not check the protected paths after the command (${reason}); tell the user.`]
      }
    }
  }
}
