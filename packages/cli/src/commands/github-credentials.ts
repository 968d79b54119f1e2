/**
 * The git credentials of a GitHub Actions job, kept from the turn. `actions/checkout` leaves the job's token in git's
 * config (`http.<server>/.extraheader`, in `.git/config` or a file it includes) unless `persist-credentials: false`;
 * there the agent's tools could read it like any file. `lathe github run` takes those entries out of the config files
 * before the turn and hands them, in memory, to its own `git fetch` and `git push` only, through `GIT_CONFIG_*`
 * variables of those processes. With nothing persisted it builds the same header from GITHUB_TOKEN.
 */
import { spawnProgram } from "@lathe/core"

/** One config entry: `http.https://github.com/.extraheader` and its value. */
interface Entry {
  readonly key: string
  readonly value: string
}

/** The variables that give `git` these entries for one command, without writing them anywhere. */
export const credentialEnv = (entries: ReadonlyArray<Entry>): Record<string, string> => {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(entries.length) }
  entries.forEach((entry, index) => {
    env[`GIT_CONFIG_KEY_${index}`] = entry.key
    env[`GIT_CONFIG_VALUE_${index}`] = entry.value
  })
  return env
}

/**
 * Removes every `http.*.extraheader` entry from the config files of the checkout in `cwd` (its own and the files it
 * includes; never the system's or a command line's) and returns them; with none, the header GITHUB_TOKEN gives for
 * `serverUrl`. Failures leave the config as it was and return what was read.
 */
export const takeCredentials = async (
  cwd: string,
  env: Readonly<Record<string, string>>,
  token: string,
  serverUrl: string
): Promise<ReadonlyArray<Entry>> => {
  const git = (...args: Array<string>) => spawnProgram({ file: "git", args, cwd, env, timeoutMs: 30_000 })
  const listed = await git("config", "--null", "--show-origin", "--get-regexp", "^http\\..*\\.extraheader$")
  const entries: Array<Entry> = []
  const files = new Map<string, Set<string>>()
  if (listed.exitCode === 0) {
    // --null: origin NUL, then key newline value NUL, for each entry.
    const fields = listed.stdout.split("\0")
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const origin = fields[i] ?? ""
      const entry = fields[i + 1] ?? ""
      const newline = entry.indexOf("\n")
      const key = newline === -1 ? entry : entry.slice(0, newline)
      const value = newline === -1 ? "" : entry.slice(newline + 1)
      if (key === "") continue
      entries.push({ key, value })
      if (origin.startsWith("file:")) {
        const file = origin.slice("file:".length)
        files.set(file, (files.get(file) ?? new Set()).add(key))
      }
    }
  }
  const system = await git("config", "--system", "--list", "--show-origin")
  const systemFiles = new Set(
    system.stdout
      .split("\n")
      .map((line) => line.split("\t")[0] ?? "")
      .filter((origin) => origin.startsWith("file:"))
      .map((origin) => origin.slice("file:".length))
  )
  for (const [file, keys] of files) {
    if (systemFiles.has(file)) continue
    for (const key of keys) await git("config", "--file", file, "--unset-all", key)
  }
  if (entries.length > 0) return entries
  if (token === "") return []
  const basic = Buffer.from(`x-access-token:${token}`).toString("base64")
  return [{ key: `http.${serverUrl.replace(/\/+$/, "")}/.extraheader`, value: `AUTHORIZATION: basic ${basic}` }]
}
