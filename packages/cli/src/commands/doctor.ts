import { execFile } from "node:child_process"
import { constants, realpathSync } from "node:fs"
import { access } from "node:fs/promises"
import { type ConfigShape, renderSnippet, scrubEnv, secretValues } from "@lathe/core"
import { launcherKeys } from "@lathe/core/launcher-keys"
import { folderBudget, whyNoWatch } from "@lathe/snapshot"
import { detectSandbox, findOnPath, toolsConfigAdvice } from "@lathe/tools"
import { loadConfig } from "../app.js"
import { defineCommand, parseCommand } from "../command-kit.js"
import type { CliIO, Command } from "../io.js"
import { storeCheck } from "../store.js"
import { modelChecks } from "./doctor-model.js"

/** `lathe doctor`, declared once for the command kit. */
export const doctorSpec = defineCommand({
  name: "doctor",
  usage: ["[--json]"],
  description: `Checks what Lathe needs on this machine and how this project is set up: the Node version, the Node the
agent's commands run (the first node on your PATH), git, ripgrep, the sandbox bash runs in (and why there is none), which secrets Lathe's environment
holds (commands outside a sandbox can read them from Lathe's process), the session store (and whether a
Postgres store is reachable), the config files read and whether the project is trusted, and the model a
run would use: whether one is configured, whether its provider has the API key it needs (named, never
shown), whether its endpoint answers (one GET <baseURL>/models, 3 s at most; no completion is sent) and
whether Lathe knows its limits. Exits 1 when something Lathe needs is missing (no model, no key, the
endpoint unreachable) or a config file is invalid.`,
  options: { json: { type: "boolean", description: "Print the checks as JSON" } }
})

/** The oldest Node Lathe runs on (the packages' `engines`). */
const MIN_NODE = [22, 13] as const

/** One line of the report. `ok: false` makes the exit code 1. */
interface Check {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

/** The first line a program prints for `args`, or undefined when it cannot run. */
const firstLine = (file: string, args: ReadonlyArray<string>, env: CliIO["env"]): Promise<string | undefined> =>
  new Promise((resolve) => {
    execFile(file, [...args], { env, timeout: 5_000 }, (error, stdout) =>
      resolve(error ? undefined : stdout.split("\n")[0]?.trim())
    )
  })

const nodeCheck = (): Check => {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number)
  const ok = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1])
  return {
    name: "node",
    ok,
    detail: `${process.version}${ok ? "" : ` (Lathe needs ${MIN_NODE.join(".")} or newer)`}`
  }
}

/**
 * The Node the agent's shell runs: the first `node` on the PATH commands get (the person's PATH, or `shell.env.set`'s
 * PATH), which is not Lathe's own runtime when the launcher runs that by its full path.
 */
const shellNodeCheck = async (io: CliIO, config: ConfigShape | undefined): Promise<Check> => {
  const path = config?.info.shell?.env?.set?.PATH ?? io.env.PATH
  const node = findOnPath("node", path)
  const version = node ? await firstLine(node, ["-v"], { ...io.env, PATH: path ?? "" }) : undefined
  const lathe = `Lathe itself runs on ${process.version} (${process.execPath})`
  if (node === undefined)
    return { name: "shell", ok: true, detail: `no node on your PATH: commands the agent runs find none; ${lathe}` }
  const same = version === process.version && realOrSelf(node) === realOrSelf(process.execPath)
  return {
    name: "shell",
    ok: true,
    detail: same
      ? `the agent's commands run node ${version} (${node}), the same Node as Lathe`
      : `the agent's commands run node ${version ?? "(no version printed)"} (${node}, first on your PATH); ${lathe}`
  }
}

/** The real path of `file`, or `file` when it cannot be resolved. */
const realOrSelf = (file: string): string => {
  try {
    return realpathSync(file)
  } catch {
    return file
  }
}

const gitCheck = async (io: CliIO): Promise<Check> => {
  const git = findOnPath("git", io.env.PATH)
  const version = git ? await firstLine(git, ["--version"], io.env) : undefined
  return version
    ? { name: "git", ok: true, detail: `${version} (${git})` }
    : { name: "git", ok: false, detail: "not found on PATH: install git (snapshots, undo and project ids need it)" }
}

/** Whether snapshots learn what changed from the kernel (the folder watch) or scan the whole project each time. */
const snapshotWatchCheck = (root: string, io: CliIO): Check => {
  const off = whyNoWatch(root, io.env)
  return {
    name: "snapshot",
    ok: true,
    detail:
      off === undefined
        ? `folder watch on: after the first snapshot, git is asked only about files that changed (up to ${folderBudget().toLocaleString("en-US")} folders watched)`
        : `folder watch off (${off}): every snapshot scans the whole project (~40 ms at 20,000 files)`
  }
}

const ripgrepCheck = async (io: CliIO): Promise<Check> => {
  let rg: string | undefined
  try {
    const shipped = (await import("@vscode/ripgrep")).rgPath
    await access(shipped, constants.X_OK)
    rg = shipped
  } catch {
    rg = findOnPath("rg", io.env.PATH)
  }
  const version = rg ? await firstLine(rg, ["--version"], io.env) : undefined
  return version
    ? { name: "ripgrep", ok: true, detail: `${version} (${rg})` }
    : { name: "ripgrep", ok: true, detail: "not found: glob and grep use the slower built-in walker" }
}

/** The sandbox check, and whether bash commands run outside any sandbox (off by config, or none on this machine). */
const sandboxCheck = async (config: ConfigShape, io: CliIO): Promise<Check & { readonly unsandboxed: boolean }> => {
  const check = await sandboxLine(config, io)
  const mode = config.info.sandbox?.mode ?? "workspace-write"
  return { ...check, unsandboxed: check.ok && (mode === "off" || check.detail.startsWith("none:")) }
}

/** What sandboxed commands may reach, and how to open the network when it is closed. */
const networkText = (network: boolean | ReadonlyArray<string> | undefined): string =>
  network === true
    ? "network allowed"
    : Array.isArray(network) && network.length > 0
      ? `network closed except ${network.join(", ")} (through Lathe's proxy, for programs that use HTTP_PROXY)`
      : `network closed (to open it, merge ${renderSnippet(toolsConfigAdvice.sandboxNetwork(["registry.npmjs.org"]))} ` +
        `for some hosts, or ${renderSnippet(toolsConfigAdvice.sandboxNetwork(true))} for all, into your config)`

const sandboxLine = async (config: ConfigShape, io: CliIO): Promise<Check> => {
  const settings = config.info.sandbox ?? {}
  const mode = settings.mode ?? "workspace-write"
  const required = settings.required === true
  const what = `mode ${mode}, ${networkText(settings.network)}${required ? ", required" : ""}`
  if (mode === "off")
    return required
      ? { name: "sandbox", ok: false, detail: `off by config, but also "required": bash is refused (${what})` }
      : { name: "sandbox", ok: true, detail: `off by config: bash runs under the permission rules alone (${what})` }
  const found = await detectSandbox({ path: io.env.PATH })
  if (found.kind === "none")
    return {
      name: "sandbox",
      ok: !required,
      detail:
        `none: ${found.reason ?? "no sandbox was found"}; ` +
        `${required ? "bash is refused (sandbox required)" : "bash runs under the permission rules alone"} (${what})`
    }
  return { name: "sandbox", ok: true, detail: `${found.version ?? found.kind} (${found.path}), ${what}` }
}

/**
 * The secrets in Lathe's own environment (names only). Commands never get them in their environment, but outside a
 * sandbox a command can still read Lathe's initial environment from `/proc/<pid>/environ` (Linux; Node cannot make
 * that file unreadable), so without a sandbox the check says so and what to do.
 */
const secretsCheck = (config: ConfigShape, io: CliIO, unsandboxed: boolean): Check => {
  const secrets = secretValues(config, io.env)
  const names = Object.keys(scrubEnv(io.env, { secrets }).env)
  const held = Object.keys(io.env)
    .filter((name) => io.env[name] !== undefined && !names.includes(name))
    .sort()
  if (held.length === 0)
    return { name: "secrets", ok: true, detail: "none in Lathe's environment (keys come from the config files)" }
  // Keys the launcher handed over on a descriptor are held in memory only: no `/proc/<pid>/environ` shows them.
  const handedOver = launcherKeys()
  const exposed = held.filter((name) => handedOver[name] === undefined)
  const list = held.join(", ")
  if (!unsandboxed || exposed.length === 0)
    return {
      name: "secrets",
      ok: true,
      detail:
        exposed.length === 0 && unsandboxed
          ? `${list} handed over by the lathe launcher (not in Lathe's environment): kept out of every command's environment`
          : `${list} in Lathe's environment: kept out of every command's environment, and sandboxed commands cannot read Lathe's`
    }
  return {
    name: "secrets",
    ok: true,
    detail:
      `warning: ${exposed.join(", ")} in Lathe's environment. They are kept out of commands' environment, but without a sandbox ` +
      `a command can read them from Lathe's process (${process.platform === "linux" ? "/proc/<pid>/environ" : "its environment"}). ` +
      "Start Lathe with the lathe command (its launcher hands *_API_KEY variables over without the environment), " +
      "keep the sandbox on (install bubblewrap; do not set sandbox off), or put keys in the config file with " +
      "{file:~/.config/lathe/<name>.key} instead of the environment."
  }
}

/** `lathe doctor`: checks the machine and the project's setup. */
export const doctorCommand: Command = async (args, io: CliIO) => {
  const parsed = parseCommand(doctorSpec, args, io)
  if (typeof parsed === "number") return parsed
  const { values } = parsed
  const loaded = await loadConfig(io)
  const tools = await Promise.all([
    shellNodeCheck(io, loaded.ok ? loaded.value.config : undefined),
    gitCheck(io),
    ripgrepCheck(io)
  ])
  const checks: Array<Check> = [nodeCheck(), ...tools]
  let project: Record<string, unknown> = {}
  let help: string | undefined
  if (!loaded.ok) checks.push({ name: "config", ok: false, detail: loaded.message })
  else {
    const { config, paths } = loaded.value
    const { unsandboxed, ...sandbox } = await sandboxCheck(config, io)
    checks.push(sandbox)
    checks.push(secretsCheck(config, io, unsandboxed))
    const trust = config.trusted
      ? "trusted"
      : "not trusted: its config may only narrow what Lathe does; `lathe trust` trusts it"
    checks.push({ name: "project", ok: true, detail: `${paths.root}, ${trust}` })
    checks.push(snapshotWatchCheck(paths.root, io))
    checks.push(await storeCheck(config, paths))
    const model = await modelChecks(config, io)
    checks.push(...model.checks)
    help = model.help
    const files = config.sources.map((s) => `${s.scope} ${s.file}${s.trusted ? "" : " (untrusted)"}`)
    checks.push({
      name: "config",
      ok: true,
      detail: files.length === 0 ? "no files: built-in defaults" : files.join("; ")
    })
    for (const notice of config.notices) checks.push({ name: "notice", ok: true, detail: notice })
    project = { root: paths.root, trusted: config.trusted, sources: config.sources, notices: config.notices }
  }
  const ok = checks.every((check) => check.ok)
  if (values.json) io.stdout(`${JSON.stringify({ ok, checks, ...project }, null, 2)}\n`)
  else
    io.stdout(
      `${checks.map((c) => `${c.ok ? "ok  " : "FAIL"}  ${c.name.padEnd(8)} ${c.detail}`).join("\n")}\n` +
        (ok ? "" : "\nSomething Lathe needs is missing or broken (the FAIL lines say what to do).\n") +
        (help === undefined ? "" : `\n${help}\n`)
    )
  return ok ? 0 : 1
}
