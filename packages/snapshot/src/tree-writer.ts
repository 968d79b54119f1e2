import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync
} from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import type { ObjectReader } from "./object-reader.js"
import type { Shadow } from "./shadow-repo.js"

/**
 * Whether a file time (ms, with the fraction file systems keep) is after `asOf`, a `Date.now()` (whole ms): compared
 * by the millisecond, as `Date.now()` drops the fraction. A file the step wrote in the millisecond it ended has a time
 * just past that moment's `Date.now()` (1000.7 against 1000), and is the step's.
 */
export const modifiedAfter = (mtimeMs: number, asOf: number): boolean => Math.floor(mtimeMs) > asOf

/**
 * A recorded tree, read folder by folder as snapshots need them, so that a snapshot of a few changed files the tree
 * already has can be written without git: each changed file is hashed and stored as a loose object, and the folders
 * above it are written again, as `update-index` and `write-tree` would write them. Only the folders on the changed
 * files' paths are read, once: a loose tree object directly, one that is packed or in the user's repository through
 * a long-lived `git cat-file --batch` (`object-reader.ts`).
 *
 * It vouches only for what it can write exactly as git would: files the tree has (a regular file, executable or not,
 * or a symlink) that are now one of those again, or gone. Anything else gives `undefined` and the snapshot goes
 * through git, which also knows the ignore rules: a file the tree does not have, a folder where a file was, a nested
 * repository, a path through a symlink or a folder that is gone, a file over `maxFileSize`, more bytes than
 * `maxSnapshotSize` or than 64 MiB (git streams them; this holds them in memory), a folder whose object cannot be read, a name that is not UTF-8. Never used where an attributes file could change what git stores (a
 * `text`, `eol`, `ident` or `working-tree-encoding` attribute rewrites a file's bytes on the way in): a
 * `.gitattributes` in any folder on the path (in the work tree or the tree), the shadow's `info/attributes`, the
 * person's global one.
 *
 * The shadow index is left as it was: the caller names the files written here to the next scan through git (see
 * `TreeMemo.unindexed`), which records them in the index again.
 */
export interface KnownTree {
  /** The root tree's hash. */
  root: string
  /** Folders read so far ("" for the root, else `a/b`) → entry name → entry. */
  readonly folders: Map<string, Map<string, TreeEntry>>
}

interface TreeEntry {
  /** As git writes it in a tree: `40000`, `100644`, `100755`, `120000` or `160000`. */
  readonly mode: string
  /** The object's SHA-1, 40 hex digits. */
  readonly hash: string
}

/** At most this many bytes of files are held to be written in one snapshot; more, and git writes it. */
const IN_MEMORY_BYTES = 64 * 1024 * 1024

const FOLDER = "40000"
const BLOBS = new Set(["100644", "100755", "120000"])

/** A tree known by its root's hash alone: its folders are read when a snapshot needs them. */
export const knownTree = (root: string): KnownTree => ({ root, folders: new Map() })

/** Attributes files git reads besides the `.gitattributes` of the tree's folders (see {@link KnownTree}). */
const attributesFiles = (gitDir: string, env: Readonly<Record<string, string | undefined>>): Array<string> => {
  const config = env.XDG_CONFIG_HOME ? env.XDG_CONFIG_HOME : join(env.HOME ?? homedir(), ".config")
  return [join(gitDir, "info", "attributes"), join(config, "git", "attributes")]
}

/** The entries of a tree object's content, or `undefined` when it holds a name that is not UTF-8. */
const parseTree = (raw: Buffer): Map<string, TreeEntry> | undefined => {
  const entries = new Map<string, TreeEntry>()
  for (let at = 0; at < raw.length; ) {
    const space = raw.indexOf(32, at)
    const end = raw.indexOf(0, space)
    if (space === -1 || end === -1 || end + 21 > raw.length) return undefined
    const mode = raw.subarray(at, space).toString("latin1")
    const bytes = raw.subarray(space + 1, end)
    const name = bytes.toString("utf8")
    if (!Buffer.from(name, "utf8").equals(bytes)) return undefined
    entries.set(name, { mode, hash: raw.subarray(end + 1, end + 21).toString("hex") })
    at = end + 21
  }
  return entries
}

/** Tree object `hash`'s content: loose in `objects`, read here, else through `reader` (packed, borrowed). */
const treeContent = async (objects: string, reader: ObjectReader, hash: string): Promise<Buffer | undefined> => {
  const file = join(objects, hash.slice(0, 2), hash.slice(2))
  if (existsSync(file)) {
    const raw = zlib().inflateSync(readFileSync(file))
    const nul = raw.indexOf(0)
    return raw.subarray(0, nul).toString("latin1") === `tree ${raw.length - nul - 1}`
      ? raw.subarray(nul + 1)
      : undefined
  }
  const object = await reader.read(hash)
  return object?.type === "tree" ? object.body : undefined
}

/** The entries of `folder` in `known`, read (and kept) when not read yet; `undefined` when it is not a folder there. */
const folderOf = async (
  known: KnownTree,
  objects: string,
  reader: ObjectReader,
  folder: string
): Promise<Map<string, TreeEntry> | undefined> => {
  const held = known.folders.get(folder)
  if (held !== undefined) return held
  let hash = known.root
  if (folder !== "") {
    const slash = folder.lastIndexOf("/")
    const parent = await folderOf(known, objects, reader, slash === -1 ? "" : folder.slice(0, slash))
    const entry = parent?.get(folder.slice(slash + 1))
    if (entry?.mode !== FOLDER) return undefined
    hash = entry.hash
  }
  const content = await treeContent(objects, reader, hash)
  const entries = content === undefined ? undefined : parseTree(content)
  if (entries !== undefined) known.folders.set(folder, entries)
  return entries
}

/** An entry's key in git's order of a tree: its name as bytes, a folder's name as if it ended in `/`. */
const orderKey = (name: string, entry: TreeEntry): Buffer =>
  Buffer.from(entry.mode === FOLDER ? `${name}/` : name, "utf8")

/**
 * Node's `crypto` and `zlib`, loaded when a tree is first written without git (not while `lathe run` starts: a read
 * session never needs them before its first request).
 */
const crypto = () => process.getBuiltinModule("node:crypto") as typeof import("node:crypto")
const zlib = () => process.getBuiltinModule("node:zlib") as typeof import("node:zlib")

/** Object folders (`objects/ab`) known to exist. */
const folders = new Set<string>()

/** Stores `body` as a loose object of `type` (unless it is there: then it is freshened, as git does) and returns its hash. */
const storeObject = (objects: string, type: "blob" | "tree", body: Buffer): string => {
  const header = Buffer.from(`${type} ${body.length}\0`, "latin1")
  const hash = crypto().createHash("sha1").update(header).update(body).digest("hex")
  const folder = join(objects, hash.slice(0, 2))
  const file = join(folder, hash.slice(2))
  if (existsSync(file)) {
    // A recent time keeps `git prune` (snapshot housekeeping) from taking an object a new tree uses.
    const now = new Date()
    utimesSync(file, now, now)
    return hash
  }
  const temporary = join(folder, `tmp_obj_${process.pid}_${crypto().randomBytes(6).toString("hex")}`)
  const packed = zlib().deflateSync(Buffer.concat([header, body]), { level: 1 })
  const make = () => {
    mkdirSync(folder, { recursive: true })
    folders.add(folder)
  }
  if (!folders.has(folder)) make()
  try {
    try {
      writeFileSync(temporary, packed, { mode: 0o444 })
    } catch (error) {
      // The repository was made again (a repair) since the folder was known.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
      make()
      writeFileSync(temporary, packed, { mode: 0o444 })
    }
    renameSync(temporary, file)
  } catch (error) {
    rmSync(temporary, { force: true })
    throw error
  }
  return hash
}

/** A tree object's content: its entries in git's order (each key made once, not at every comparison). */
const treeBody = (entries: Map<string, TreeEntry>): Buffer =>
  Buffer.concat(
    [...entries]
      .map(([name, entry]) => ({ name, entry, key: orderKey(name, entry) }))
      .sort((a, b) => Buffer.compare(a.key, b.key))
      .flatMap(({ name, entry }) => [Buffer.from(`${entry.mode} ${name}\0`, "utf8"), Buffer.from(entry.hash, "hex")])
  )

/** What a changed path is now, for the tree: a blob to store, gone, or something only git can record. */
type Found = { readonly mode: string; readonly body: Buffer } | "gone" | "git"

/**
 * What `path` is now. Every folder above it must be a real folder (not a symlink): git never looks beyond a symlink
 * (a repository's link could point anywhere on the machine), so a path through one is left to git. `folders` keeps
 * the folders already checked in this snapshot.
 */
const lookAt = (
  root: string,
  path: string,
  maxFileSize: number,
  folders: Map<string, boolean>,
  asOf: number | undefined
): Found => {
  for (let at = path.lastIndexOf("/"); at > 0; at = path.lastIndexOf("/", at - 1)) {
    const folder = path.slice(0, at)
    let real = folders.get(folder)
    if (real === undefined) {
      real = lstatSync(join(root, folder), { throwIfNoEntry: false })?.isDirectory() === true
      folders.set(folder, real)
    }
    if (!real) return "git"
  }
  const full = join(root, path)
  const info = lstatSync(full, { throwIfNoEntry: false })
  if (info === undefined) return "gone"
  // Modified after the moment asked for: git's scan decides (it leaves a save made meanwhile for the next snapshot).
  if (asOf !== undefined && modifiedAfter(info.mtimeMs, asOf)) return "git"
  if (info.isSymbolicLink()) return { mode: "120000", body: Buffer.from(readlinkSync(full, { encoding: "buffer" })) }
  if (!info.isFile() || info.size > Math.min(maxFileSize, IN_MEMORY_BYTES)) return "git"
  // Git records a file as executable by its owner's execute bit alone.
  return { mode: (info.mode & 0o100) !== 0 ? "100755" : "100644", body: readFileSync(full) }
}

/**
 * Writes the work tree's new tree from `known` and the `paths` changed since it (relative to the root), updating
 * `known` to it, and returns its hash; or `undefined`, with `known` untouched, when git must write it (see
 * {@link KnownTree}), among them a file modified after `asOf` (ms since the epoch; see `writeTree`). Needs the
 * snapshot lock.
 */
export const writeKnown = async (
  shadow: Shadow,
  known: KnownTree,
  reader: ObjectReader,
  paths: ReadonlyArray<string>,
  limits: { readonly maxFileSize: number; readonly maxSnapshotSize: number },
  asOf?: number,
  env: Readonly<Record<string, string | undefined>> = process.env
): Promise<string | undefined> => {
  const objects = join(shadow.gitDir, "objects")
  if (attributesFiles(shadow.gitDir, env).some((file) => existsSync(file))) return undefined
  const checked = new Set<string>()
  /** Whether an attributes file could apply to the files of `folder` (its own or one above it). */
  const attributed = async (folder: string): Promise<boolean> => {
    for (let at = folder; ; ) {
      if (!checked.has(at)) {
        if ((await folderOf(known, objects, reader, at))?.has(".gitattributes") !== false) return true
        if (existsSync(join(shadow.root, at, ".gitattributes"))) return true
        checked.add(at)
      }
      if (at === "") return false
      const slash = at.lastIndexOf("/")
      at = slash === -1 ? "" : at.slice(0, slash)
    }
  }
  const changes: Array<{ folder: string; name: string; found: Exclude<Found, "git"> }> = []
  const real = new Map<string, boolean>()
  let bytes = 0
  for (const path of paths) {
    const slash = path.lastIndexOf("/")
    const folder = slash === -1 ? "" : path.slice(0, slash)
    const name = path.slice(slash + 1)
    if (name === ".gitattributes" || (await attributed(folder))) return undefined
    const had = (await folderOf(known, objects, reader, folder))?.get(name)
    const found = lookAt(shadow.root, path, limits.maxFileSize, real, asOf)
    // A path the tree never had and that is not there: nothing to record (a file made and removed in between).
    if (had === undefined && found === "gone") continue
    if (had === undefined || !BLOBS.has(had.mode) || found === "git") return undefined
    if (found !== "gone") bytes += found.body.length
    // Git streams what it stores; this holds the files in memory until they are written.
    if (bytes > Math.min(limits.maxSnapshotSize, IN_MEMORY_BYTES)) return undefined
    changes.push({ folder, name, found })
  }
  // Copies of the folders that change, written below from the deepest up.
  const touched = new Map<string, Map<string, TreeEntry>>()
  const copyOf = (folder: string) => {
    let entries = touched.get(folder)
    if (entries === undefined) {
      entries = new Map(known.folders.get(folder))
      touched.set(folder, entries)
    }
    return entries
  }
  for (const { folder, name, found } of changes) {
    const entries = copyOf(folder)
    if (found === "gone") entries.delete(name)
    else entries.set(name, { mode: found.mode, hash: storeObject(objects, "blob", found.body) })
    for (let at = folder; at !== ""; ) {
      const slash = at.lastIndexOf("/")
      at = slash === -1 ? "" : at.slice(0, slash)
      copyOf(at)
    }
  }
  const deepestFirst = [...touched.keys()].sort((a, b) => depth(b) - depth(a))
  const written = new Map<string, string | undefined>()
  for (const folder of deepestFirst) {
    const entries = touched.get(folder) as Map<string, TreeEntry>
    for (const [name, entry] of entries) {
      if (entry.mode !== FOLDER) continue
      const child = folder === "" ? name : `${folder}/${name}`
      if (!written.has(child)) continue
      const hash = written.get(child)
      if (hash === undefined) entries.delete(name)
      else entries.set(name, { mode: FOLDER, hash })
    }
    // A folder left empty is not in a tree git writes (the root is written even when empty).
    written.set(
      folder,
      entries.size === 0 && folder !== "" ? undefined : storeObject(objects, "tree", treeBody(entries))
    )
  }
  const root = written.get("")
  if (root === undefined) return undefined
  for (const [folder, entries] of touched) {
    if (written.get(folder) === undefined && folder !== "") known.folders.delete(folder)
    else known.folders.set(folder, entries)
  }
  known.root = root
  return root
}

const depth = (folder: string): number => (folder === "" ? 0 : folder.split("/").length)
