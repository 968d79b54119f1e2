import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { dataDir, type PathEnv } from "./paths.js"

/**
 * Keys stored by `lathe auth login`: one JSON file in the data directory (`<data>/auth.json`), readable by the user
 * only (0600, its folder 0700). A key in the environment wins over a stored one, and config `apiKey` over both.
 * The file maps a provider id (`anthropic`, `google`, a custom id) to `{ "type": "api", "key": "…" }`.
 */

/** One stored credential. */
export interface StoredKey {
  readonly type: "api"
  readonly key: string
}

/** Where the keys live for `env` (`LATHE_DATA_DIR`, else `$XDG_DATA_HOME/lathe`, else `~/.local/share/lathe`). */
export const authFile = (env: PathEnv = process.env): string => join(dataDir(env), "auth.json")

const isStoredKey = (value: unknown): value is StoredKey =>
  typeof value === "object" &&
  value !== null &&
  (value as { type?: unknown }).type === "api" &&
  typeof (value as { key?: unknown }).key === "string" &&
  (value as { key: string }).key.length > 0

/**
 * The stored keys, by provider id. A missing file is no keys; an unreadable or malformed one is no keys too (a run
 * must not fail because of it: `lathe auth list` reports the problem instead, through `readAuthFile`).
 */
export const storedKeys = (env: PathEnv = process.env): Readonly<Record<string, string>> => {
  const read = readAuthFile(env)
  return read.ok ? read.keys : {}
}

/** The stored keys, or why the file could not be read (missing file: no keys, `ok`). */
export const readAuthFile = (
  env: PathEnv = process.env
):
  | { readonly ok: true; readonly keys: Readonly<Record<string, string>> }
  | { readonly ok: false; readonly problem: string } => {
  const file = authFile(env)
  let text: string
  try {
    text = readFileSync(file, "utf8")
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { ok: true, keys: {} }
    return { ok: false, problem: `cannot read ${file}: ${(error as Error).message}` }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return { ok: false, problem: `${file} is not valid JSON; fix it or delete it and run \`lathe auth login\` again` }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    return { ok: false, problem: `${file} must hold an object of provider id → { "type": "api", "key": "…" }` }
  const keys: Record<string, string> = {}
  for (const [id, value] of Object.entries(parsed)) if (isStoredKey(value)) keys[id] = value.key
  return { ok: true, keys }
}

const write = (env: PathEnv, keys: Readonly<Record<string, string>>): void => {
  const file = authFile(env)
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  const body = Object.fromEntries(Object.entries(keys).map(([id, key]) => [id, { type: "api", key }]))
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 })
  chmodSync(temporary, 0o600)
  renameSync(temporary, file)
}

/** Stores `key` for `provider` (replacing any stored one), keeping the file 0600. */
export const storeKey = (provider: string, key: string, env: PathEnv = process.env): void => {
  const read = readAuthFile(env)
  if (!read.ok) throw new Error(read.problem)
  write(env, { ...read.keys, [provider]: key })
}

/** Removes the stored key of `provider`; whether there was one. */
export const removeKey = (provider: string, env: PathEnv = process.env): boolean => {
  const read = readAuthFile(env)
  if (!read.ok) throw new Error(read.problem)
  if (read.keys[provider] === undefined) return false
  const { [provider]: _removed, ...rest } = read.keys
  write(env, rest)
  return true
}
