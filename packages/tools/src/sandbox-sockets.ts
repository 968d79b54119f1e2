import { type Dirent, lstatSync, readdirSync, realpathSync } from "node:fs"
import { isAbsolute, join, relative, sep } from "node:path"

/** Sockets and socket folders to hide from a sandboxed command. Real paths. */
export interface HiddenSockets {
  readonly sockets: ReadonlyArray<string>
  readonly folders: ReadonlyArray<string>
}

/** Folders that hold other programs' sockets, hidden whole (when they exist). */
const KNOWN_FOLDERS = ["/run/user", "/run/dbus", "/run/screen", "/var/run/screen", "/tmp/.X11-unix", "/tmp/.ICE-unix"]
/** Folders named like this in a scanned folder hold sockets (tmux, ssh-agent, screen, X11, font server). */
const SOCKET_FOLDER = /^(tmux-\d+|ssh-[\w.-]+|\.X11-unix|\.ICE-unix|\.font-unix|screens|S-\w+)$/
/** Environment variables naming a folder of sockets. */
const FOLDER_VARIABLES = ["XDG_RUNTIME_DIR", "SCREENDIR"]
/** Where, below the home folder, agents and container tools keep sockets. */
const HOME_FOLDERS = [".ssh", ".gnupg", ".docker", ".colima", ".lima", ".rd", ".orbstack", ".local/share/containers"]
/**
 * Entries looked at per run at most in folders *below* the scanned ones (`/run/*`, `~/.ssh/*`), so a huge tree cannot
 * slow every command. The scanned folders' own entries (the temp dir's, `/tmp`'s) are always all read: a budget there
 * would leave a socket visible exactly when the temp dir is busiest (a CI run filled /tmp past it).
 */
const SCAN_BUDGET = 4000

const realOf = (path: string): string | undefined => {
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

/** Paths a variable's value names: itself when absolute, tmux's `path,pid,index`, D-Bus's `unix:path=…`, `unix://…`. */
const pathsIn = (name: string, value: string): Array<string> => {
  const found: Array<string> = []
  if (value.startsWith("/")) found.push(name === "TMUX" ? (value.split(",")[0] ?? value) : value)
  for (const match of value.matchAll(/unix:(?:path=|\/\/)([^,;]+)/g)) if (match[1]) found.push(match[1])
  return found
}

/**
 * Finds every file-system socket a sandboxed command could connect to outside the project and hides it: the well-known
 * socket folders (`/run/user`, `/run/dbus`, X11's, screen's), the folders and sockets the environment names
 * (`$XDG_RUNTIME_DIR`, `$SSH_AUTH_SOCK`, `$DBUS_SESSION_BUS_ADDRESS`'s `unix:path=`, `$TMUX`, `$DOCKER_HOST`, any
 * variable whose value is a socket), and sockets and socket folders (`tmux-*`, `ssh-*`) found at run time in the temp
 * dir and `/tmp` (their own entries; a socket one folder further down is missed unless a variable names it), `/run`
 * (docker.sock, containerd, systemd, …) and the home folder's agent folders (`~/.ssh`, `~/.gnupg`, `~/.docker`, …),
 * two levels deep. The project itself is neither scanned nor hidden (its own sockets stay
 * usable); a folder holding one of `keep` (the project, the writable folders, the working directory) is never hidden
 * whole. Abstract sockets are not files: the network namespace closes them when the network is closed.
 */
export const findSockets = (options: {
  readonly env: Readonly<Record<string, string | undefined>>
  readonly tempDir: string
  /** The project folder whose own sockets stay usable; none when no project folder is writable. */
  readonly root: string | undefined
  readonly keep: ReadonlyArray<string>
  readonly home?: string | undefined
}): HiddenSockets => {
  const sockets = new Set<string>()
  const folders = new Set<string>()
  const inProject = (path: string) => options.root !== undefined && within(options.root, path)
  /** Folders that hold something the command needs: scanned for sockets instead of hidden whole. */
  const holding: Array<string> = []
  const hideFolder = (path: string) => {
    const dir = realOf(path)
    if (!dir || !lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()) return
    if (dir === "/" || options.keep.some((kept) => within(dir, kept))) holding.push(dir)
    else folders.add(dir)
  }
  const hideSocket = (path: string) => {
    const file = realOf(path)
    if (file && !inProject(file) && lstatSync(file, { throwIfNoEntry: false })?.isSocket()) sockets.add(file)
  }

  for (const folder of KNOWN_FOLDERS) hideFolder(folder)
  for (const name of FOLDER_VARIABLES) {
    const value = options.env[name]
    if (value && isAbsolute(value)) hideFolder(value)
  }
  for (const [name, value] of Object.entries(options.env))
    if (value) for (const path of pathsIn(name, value)) hideSocket(path)

  let budget = SCAN_BUDGET
  /** Looks `levels` deep below `dir` for sockets and socket folders; `nested` entries count against the budget. */
  const scan = (dir: string, levels: number, nested = false) => {
    if ((nested && budget <= 0) || inProject(dir)) return
    let entries: Array<Dirent>
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries) {
      if (nested && --budget <= 0) return
      const path = join(dir, entry.name)
      if (entry.isSocket()) hideSocket(path)
      else if (entry.isDirectory()) {
        if (SOCKET_FOLDER.test(entry.name)) hideFolder(path)
        else if (levels > 1) scan(path, levels - 1, true)
      }
    }
  }
  // A temp dir holds many folders (one per build, test run, editor): reading each would cost every command tens of
  // milliseconds, so only its own entries are read: its sockets and the folders named for them (`tmux-0`, `ssh-…`).
  // /run and the agent folders are small: two levels.
  const home = options.home
  const scans: Array<readonly [string, number]> = [
    [options.tempDir, 1],
    ["/tmp", 1],
    ["/run", 2],
    ...(home ? HOME_FOLDERS.map((dir) => [join(home, dir), 2] as const) : []),
    ...(options.env.TMUX_TMPDIR ? [[options.env.TMUX_TMPDIR, 1] as const] : []),
    ...holding.map((dir) => [dir, 1] as const)
  ]
  const scanned = new Set<string>()
  for (const [path, levels] of scans) {
    const dir = realOf(path)
    if (dir === undefined || scanned.has(dir)) continue
    scanned.add(dir)
    scan(dir, levels)
  }

  const hidden = [...folders].filter((dir) => ![...folders].some((other) => other !== dir && within(other, dir)))
  return {
    folders: hidden,
    sockets: [...sockets].filter((file) => !hidden.some((dir) => within(dir, file)))
  }
}
