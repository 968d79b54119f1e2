import { spawn } from "node:child_process"
import { accessSync, constants, readFileSync } from "node:fs"
import { delimiter, join } from "node:path"
import { bwrapArgs } from "./sandbox-bwrap.js"
import type { SandboxAvailability, SandboxBlock, SandboxPlan } from "./sandbox-plan.js"
import { matchAllowList, parseAllowList } from "./sandbox-proxy.js"
import { seatbeltArgs } from "./sandbox-seatbelt.js"

// The sandbox's types live in sandbox-plan.ts, below the argument builders of bwrap and seatbelt; this is their door.
export type {
  SandboxAvailability,
  SandboxBlock,
  SandboxDetector,
  SandboxMode,
  SandboxPlan,
  SandboxSettings
} from "./sandbox-plan.js"

/** The first executable called `name` on `path` (a PATH string), if any. */
export const findOnPath = (name: string, path: string | undefined): string | undefined => {
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir === "") continue
    const candidate = join(dir, name)
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // not here
    }
  }
  return undefined
}

/** Runs a program briefly; resolves with its exit code (null on a spawn error or timeout) and its output. */
const probe = (file: string, args: ReadonlyArray<string>): Promise<{ code: number | null; output: string }> =>
  new Promise((resolve) => {
    const child = spawn(file, [...args], { stdio: ["ignore", "pipe", "pipe"], timeout: 5_000 })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8")
    })
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8")
    })
    child.on("error", (error) => resolve({ code: null, output: error.message }))
    child.on("close", (code) => resolve({ code, output: output.trim() }))
  })

/** Reads a one-line sysctl under /proc/sys; undefined when absent. */
const sysctl = (name: string): string | undefined => {
  try {
    return readFileSync(join("/proc/sys", name), "utf8").trim()
  } catch {
    return undefined
  }
}

/** Why this machine refuses the user namespace the sandbox needs, from the sysctls that commonly say so. */
const usernsHint = (): string => {
  if (sysctl("user/max_user_namespaces") === "0") return "user namespaces are turned off (user.max_user_namespaces = 0)"
  if (sysctl("kernel/unprivileged_userns_clone") === "0")
    return "unprivileged user namespaces are turned off (kernel.unprivileged_userns_clone = 0)"
  if (sysctl("kernel/apparmor_restrict_unprivileged_userns") === "1")
    return "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1); add an AppArmor profile for bwrap"
  return (
    "the sandbox needs a user namespace, which may be blocked here (a container's seccomp profile, " +
    "a disabled kernel setting or a security module)"
  )
}

const detectBubblewrap = async (path: string | undefined): Promise<SandboxAvailability> => {
  const bwrap = findOnPath("bwrap", path)
  if (!bwrap)
    return {
      kind: "none",
      reason:
        "bubblewrap (bwrap) is not installed or not on PATH; install the bubblewrap package (apt install bubblewrap)"
    }
  const shell = findOnPath("true", path) ?? "/bin/true"
  // The probe uses the very arguments commands get: a user namespace, no capabilities, no nested namespaces.
  const plan: SandboxPlan = { mode: "read-only", network: false, writable: [], readOnly: [], cwd: "/" }
  const [full, version] = await Promise.all([probe(bwrap, bwrapArgs(plan, [shell, []])), probe(bwrap, ["--version"])])
  let run = full
  let disableUserns = true
  if (run.code !== 0 && /disable-userns/.test(run.output)) {
    // bubblewrap before 0.8.0: everything but --disable-userns.
    disableUserns = false
    run = await probe(bwrap, bwrapArgs({ ...plan, disableUserns }, [shell, []]))
  }
  if (run.code !== 0)
    return {
      kind: "none",
      path: bwrap,
      reason: `${bwrap} cannot create a sandbox here (${run.output.split("\n")[0] || `exit code ${run.code}`}); ${usernsHint()}`
    }
  return { kind: "bubblewrap", path: bwrap, disableUserns, ...(version.code === 0 ? { version: version.output } : {}) }
}

const detectSeatbelt = async (): Promise<SandboxAvailability> => {
  const exec = "/usr/bin/sandbox-exec"
  const run = await probe(exec, ["-p", "(version 1)(allow default)", "/usr/bin/true"])
  return run.code === 0
    ? { kind: "seatbelt", path: exec }
    : { kind: "none", reason: `${exec} does not run here (${run.output.split("\n")[0] || `exit code ${run.code}`})` }
}

const cache = new Map<string, Promise<SandboxAvailability>>()

/**
 * Finds the sandbox of this machine once per platform and PATH: on Linux, bubblewrap that can actually start a
 * sandbox (a tiny probe run); on macOS, `sandbox-exec`; elsewhere none.
 */
export const detectSandbox = (
  options: { readonly platform?: NodeJS.Platform; readonly path?: string | undefined } = {}
): Promise<SandboxAvailability> => {
  const platform = options.platform ?? process.platform
  const path = options.path ?? process.env.PATH
  const key = `${platform}\0${path ?? ""}`
  let found = cache.get(key)
  if (!found) {
    found =
      platform === "linux"
        ? detectBubblewrap(path)
        : platform === "darwin"
          ? detectSeatbelt()
          : Promise.resolve<SandboxAvailability>({ kind: "none", reason: `no sandbox is supported on ${platform}` })
    cache.set(key, found)
  }
  return found
}

/** The argv that runs `argv` inside the sandbox `kind` under `plan`. */
export const sandboxArgv = (
  kind: "bubblewrap" | "seatbelt",
  program: string,
  plan: SandboxPlan,
  argv: readonly [string, ReadonlyArray<string>]
): readonly [string, ReadonlyArray<string>] =>
  kind === "bubblewrap" ? [program, bwrapArgs(plan, argv)] : [program, seatbeltArgs(plan, argv)]

const READ_ONLY = /read-only file system|EROFS|device or resource busy|EBUSY/i
// A failed name lookup, a refused or unreachable connection, or a proxy that cannot be reached, as npm, pip, cargo,
// go, git, curl, wget, Python, Node and Rust clients print them. Inside the sandbox there is no DNS and nothing
// listens that the command did not start itself.
const NO_NETWORK = new RegExp(
  [
    "network is unreachable",
    "ENETUNREACH",
    "could not resolve (?:host|hostname|proxy)",
    "temporary failure in name resolution",
    "name or service not known",
    "nodename nor servname",
    "no address associated with hostname",
    "unable to resolve host address",
    "failed to lookup address information",
    "EAI_AGAIN",
    "ENOTFOUND",
    "getaddrinfo",
    String.raw`lookup \S+ on \S+: `,
    "dial tcp: lookup",
    "connection refused",
    "ECONNREFUSED",
    "failed to establish a new connection",
    "couldn'?t connect to (?:server|host)",
    "failed to connect to",
    "unable to connect to proxy",
    "Lathe's sandbox proxy could not",
    "CONNECT tunnel failed, response 50[234]",
    "ProxyError"
  ].join("|"),
  "i"
)
// Lathe's proxy refused a host the allow-list does not name (its 403, as curl, npm, pip and git report it).
const PROXY_REFUSED =
  /Lathe's sandbox proxy refused|CONNECT tunnel failed, response 403|Tunnel connection failed: 403|statusCode=403|403 Forbidden.*proxy|proxy.*403/i

// A Unix socket refused (the seccomp filter's EACCES; seatbelt's EPERM): a denial and a socket word on one line, as
// tmux, ssh-add, git's credential cache, psql, docker and Node print it, or Python's traceback through socket.py.
const DENIED = "(?:permission denied|EACCES|operation not permitted|EPERM)"
const SOCKET_WORD = String.raw`(?:connect|socket|\.sock\b)`
const NO_UNIX_SOCKET = new RegExp(
  String.raw`${SOCKET_WORD}.*${DENIED}|${DENIED}.*${SOCKET_WORD}|socket\.py[\s\S]*PermissionError: \[Errno 13\]`,
  "im"
)

/**
 * Whether the output reports a 403 for a URL whose host the allow-list does not hold (npm reports the proxy's refusal
 * as `403 Forbidden - GET https://host/…`); a 403 from a listed host is the host's own answer.
 */
const forbiddenUnlisted = (output: string, allowHosts: ReadonlyArray<string>): boolean => {
  const entries = parseAllowList(allowHosts)
  for (const match of output.matchAll(/\b403\b[^\n]*?(https?):\/\/(\[[^\]]+\]|[^/\s:'"]+)(?::(\d+))?/gi)) {
    const [, scheme, host, port] = match
    if (host && !matchAllowList(entries, host, Number(port ?? (scheme === "http" ? 80 : 443)))) return true
  }
  return false
}

/**
 * Whether a command that ran in the sandbox failed because of it: a non-zero exit whose output shows a write to a
 * read-only file system (or a move or removal of a protected path, which the sandbox pins: busy), or (network closed)
 * a host Lathe's proxy refused (with an allow-list), an unreachable network, a failed name lookup or a refused
 * connection, whatever the program (inside the sandbox nothing listens that the command did not start itself), or a
 * Unix socket the kernel refused to create (the seccomp filter of a network-closed sandbox). A command that timed out
 * counts only for the network, when its output already shows the failure (a client retrying until killed).
 */
export const sandboxBlock = (
  result: { readonly exitCode: number | null; readonly output: string; readonly timedOut: boolean },
  plan: Pick<SandboxPlan, "network" | "allowHosts">
): SandboxBlock | undefined => {
  if (result.exitCode === 0) return undefined
  if (result.timedOut) return !plan.network && NO_NETWORK.test(result.output) ? "network" : undefined
  if (READ_ONLY.test(result.output)) return "write"
  if (
    !plan.network &&
    plan.allowHosts &&
    (PROXY_REFUSED.test(result.output) || forbiddenUnlisted(result.output, plan.allowHosts))
  )
    return "proxy"
  if (!plan.network && NO_NETWORK.test(result.output)) return "network"
  if (!plan.network && NO_UNIX_SOCKET.test(result.output)) return "socket"
  return undefined
}
