/**
 * Provider keys the `lathe` launcher handed over on a file descriptor instead of the environment, so that
 * `/proc/<pid>/environ` of Lathe (and of the launcher, which `exec`s into Lathe) shows none. They live in this private
 * map only, never in `process.env` (which every child inherits): Lathe reads them through the environment view the
 * CLI builds (`{ ...process.env, ...launcherKeys() }`), and the bash tool starts from that view too, so its scrubbing
 * and `shell.env.inherit` decide about them exactly as before.
 *
 * The launcher sets `LATHE_KEYS_FD` to the descriptor and writes one `NAME=value` line per key to it, the value with
 * each backslash written `\\` and each newline `\n` (so a key holding a newline is handed over too); the names it
 * hands over are those matching {@link LAUNCHER_KEY_PATTERN}.
 */
import { closeSync, fstatSync, readFileSync } from "node:fs"

/** The names the launcher hands over: `*_API_KEY` and the AWS secrets Bedrock reads. */
export const LAUNCHER_KEY_PATTERN =
  /^(?:[A-Za-z0-9_]*_API_KEY|AWS_SECRET_ACCESS_KEY|AWS_SESSION_TOKEN|AWS_BEARER_TOKEN_BEDROCK)$/

/**
 * The one map of handed-over keys in this process. It hangs off `globalThis` under a registered symbol, not in a
 * module-level constant: `lathe run`'s own build (`run.cjs`) carries a second copy of this module, evaluated after the
 * main chunk took the keys, and a constant of its own would be an empty map there (the plugin host's catalogue and the
 * command runner read keys through that copy).
 */
const KEYS = Symbol.for("lathe.launcherKeys")
const shared = globalThis as { [KEYS]?: Record<string, string> }
shared[KEYS] ??= {}
const keys: Record<string, string> = shared[KEYS]

/**
 * Reads the keys the launcher handed over, once, synchronously, before anything else reads the environment: parses
 * `NAME=value` lines from the descriptor `LATHE_KEYS_FD` names, closes it and removes the variable. Without the
 * variable (Lathe started another way) it does nothing; with the variable but no pipe or file open on that
 * descriptor, it reads no keys and touches nothing. Lines whose name does not match the pattern are ignored. The
 * descriptor, once read, is closed, so no child inherits it.
 */
export const takeLauncherKeys = (env: NodeJS.ProcessEnv = process.env): void => {
  const fd = Number(env.LATHE_KEYS_FD)
  delete env.LATHE_KEYS_FD
  if (!Number.isInteger(fd) || fd < 3) return
  let text: string
  try {
    // Only what the launcher opens (a pipe, or a here-document's file): never one of Node's own descriptors.
    const kind = fstatSync(fd)
    if (!kind.isFIFO() && !kind.isFile()) return
    text = readFileSync(fd, "utf8")
    closeSync(fd)
  } catch {
    return
  }
  for (const line of text.split("\n")) {
    const at = line.indexOf("=")
    const name = line.slice(0, at)
    if (at > 0 && LAUNCHER_KEY_PATTERN.test(name)) keys[name] = unescapeValue(line.slice(at + 1))
  }
}

/** A value as the launcher wrote it, back to itself: `\\` is a backslash, `\n` a newline. */
const unescapeValue = (value: string): string =>
  value.replace(/\\([\\n])/g, (_, char: string) => (char === "n" ? "\n" : "\\"))

/** The keys the launcher handed over (empty when Lathe was started without the launcher). */
export const launcherKeys = (): Readonly<Record<string, string>> => keys
