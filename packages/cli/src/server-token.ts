import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { dataDir } from "@lathe/core"

/**
 * How this machine's `lathe` finds the token of a local `lathe serve`: the server writes it to
 * `<data dir>/servers/<port>.token` (readable by this user only) while it runs, and `--attach` to a loopback address
 * reads it when no `--token` or `LATHE_SERVER_TOKEN` is given. A web page cannot read files, so this hands the token
 * to local programs only.
 */
export const serverTokenPath = (env: Readonly<Record<string, string | undefined>>, port: number): string =>
  join(dataDir(env), "servers", `${port}.token`)

/** Writes the token file of a server on `port` (mode 0600, its folder 0700); resolves with its path. */
export const writeServerToken = async (
  env: Readonly<Record<string, string | undefined>>,
  port: number,
  token: string
): Promise<string> => {
  const path = serverTokenPath(env, port)
  await mkdir(join(path, ".."), { recursive: true, mode: 0o700 })
  await writeFile(path, `${token}\n`, { mode: 0o600 })
  await chmod(path, 0o600)
  return path
}

/** Removes the token file of a server on `port`, unless another server has written its own there since. */
export const removeServerToken = async (
  env: Readonly<Record<string, string | undefined>>,
  port: number,
  token: string
): Promise<void> => {
  const path = serverTokenPath(env, port)
  const current = await readFile(path, "utf8").catch(() => undefined)
  if (current?.trim() === token) await rm(path, { force: true })
}

const isLoopbackHost = (hostname: string): boolean =>
  hostname === "localhost" || hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(hostname)

/**
 * The token a local `lathe serve` left for `url`, when `url` is a loopback address (`127.0.0.1`, `localhost`,
 * `[::1]`) and the file exists; otherwise `undefined`.
 */
export const localServerToken = async (
  env: Readonly<Record<string, string | undefined>>,
  url: string
): Promise<string | undefined> => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return undefined
  }
  if (parsed.protocol !== "http:" || !isLoopbackHost(parsed.hostname)) return undefined
  const token = await readFile(serverTokenPath(env, Number(parsed.port || 80)), "utf8").catch(() => undefined)
  return token?.trim() || undefined
}
