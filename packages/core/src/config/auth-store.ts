import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import type { CredentialStore, SignInCredential } from "../provider/sign-in.js"
import { dataDir, type PathEnv } from "./paths.js"

/**
 * Keys stored by `lathe auth login`: one JSON file in the data directory (`<data>/auth.json`), readable by the user
 * only (0600, its folder 0700). A key in the environment wins over a stored one, and config `apiKey` over both.
 * The file maps a provider id (`anthropic`, `google`, a custom id) to `{ "type": "api", "key": "…" }`, or for an
 * account sign-in (`github-copilot`, `chatgpt`) to `{ "type": "oauth", "refresh": "…", "access": "…", "expires": … }`.
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

const isSignIn = (value: unknown): value is SignInCredential =>
  typeof value === "object" &&
  value !== null &&
  (value as { type?: unknown }).type === "oauth" &&
  typeof (value as { refresh?: unknown }).refresh === "string" &&
  (value as { refresh: string }).refresh.length > 0

/**
 * The stored keys, by provider id. A missing file is no keys; an unreadable or malformed one is no keys too (a run
 * must not fail because of it: `lathe auth list` reports the problem instead, through `readAuthFile`).
 */
export const storedKeys = (env: PathEnv = process.env): Readonly<Record<string, string>> => {
  const read = readAuthFile(env)
  return read.ok ? read.keys : {}
}

/**
 * The stored keys, or why the file could not be read (missing file: no keys, `ok`). `keys` holds a sign-in's
 * long-lived token too (what its provider starts from, so it counts as set up); `signIns` says which ids signed in.
 */
export const readAuthFile = (
  env: PathEnv = process.env
):
  | {
      readonly ok: true
      readonly keys: Readonly<Record<string, string>>
      readonly signIns: Readonly<Record<string, SignInCredential>>
    }
  | { readonly ok: false; readonly problem: string } => {
  const read = readEntries(env)
  if (!read.ok) return read
  const keys: Record<string, string> = {}
  const signIns: Record<string, SignInCredential> = {}
  for (const [id, value] of Object.entries(read.entries))
    if (isStoredKey(value)) keys[id] = value.key
    else if (isSignIn(value)) {
      keys[id] = value.refresh
      signIns[id] = value
    }
  return { ok: true, keys, signIns }
}

/** Every entry of the file as it is (entries of kinds this version does not know are kept when writing). */
const readEntries = (
  env: PathEnv
):
  | { readonly ok: true; readonly entries: Readonly<Record<string, unknown>> }
  | { readonly ok: false; readonly problem: string } => {
  const file = authFile(env)
  let text: string
  try {
    text = readFileSync(file, "utf8")
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { ok: true, entries: {} }
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
  return { ok: true, entries: parsed as Record<string, unknown> }
}

const write = (env: PathEnv, body: Readonly<Record<string, unknown>>): void => {
  const file = authFile(env)
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 })
  chmodSync(temporary, 0o600)
  renameSync(temporary, file)
}

/** Stores `key` for `provider` (replacing any stored one), keeping the file 0600. */
export const storeKey = (provider: string, key: string, env: PathEnv = process.env): void => {
  const read = readEntries(env)
  if (!read.ok) throw new Error(read.problem)
  write(env, { ...read.entries, [provider]: { type: "api", key } })
}

/** Stores the sign-in of `provider` (replacing a stored key or sign-in), keeping the file 0600. */
export const storeSignIn = (provider: string, credential: SignInCredential, env: PathEnv = process.env): void => {
  const read = readEntries(env)
  if (!read.ok) throw new Error(read.problem)
  write(env, { ...read.entries, [provider]: credential })
}

/**
 * The stored sign-in of `provider` as its descriptor reads and renews it during a run. A renewal that cannot be
 * written (a read-only data directory) is kept for this run only.
 */
export const credentialStore = (provider: string, env: PathEnv = process.env): CredentialStore => ({
  read: () => {
    const read = readAuthFile(env)
    return read.ok ? read.signIns[provider] : undefined
  },
  write: (credential) => {
    try {
      storeSignIn(provider, credential, env)
    } catch {}
  }
})

/** Removes the stored key or sign-in of `provider`; whether there was one. */
export const removeKey = (provider: string, env: PathEnv = process.env): boolean => {
  const read = readEntries(env)
  if (!read.ok) throw new Error(read.problem)
  if (read.entries[provider] === undefined) return false
  const { [provider]: _removed, ...rest } = read.entries
  write(env, rest)
  return true
}
