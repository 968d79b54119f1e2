// Every class of secret stays out of what bash and plugin programs get: the host's rule (core's `secretValues` and
// `scrubEnv`) through @lathe/tools' bash and the CLI's sandboxed CommandRunner. A test of the two together, so it
// lives with the CLI, the one package that knows both (a feature package's tests see the kit alone).
import { spawnSync } from "node:child_process"
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { ConfigInfo } from "@lathe/core"
import { CommandRunner, Config, Paths, PROVIDER_KEY_NAMES, scrubEnv, secretValues } from "@lathe/core"
import { runTool } from "@lathe/plugin/testing"
import { bashOptionsFromConfig, createBashTool } from "@lathe/tools"
import { Effect, Layer } from "effect"
import { sandboxedCommandRunner } from "../src/command-runner.js"

const tempDir = (): string => realpathSync(mkdtempSync(join(tmpdir(), "lathe-secrets-env-")))

/** A config holding a credential in every position Lathe uses one. */
const info = {
  provider: {
    corp: {
      type: "openai-compatible",
      apiKey: "sk-corp-apikey-0001",
      headers: { "X-Corp-Auth": "Bearer corp-header-0002" },
      options: { apiKey: "sk-options-0003" }
    }
  },
  store: { type: "postgres", url: "postgres://lathe:store-pw-0004@db/lathe" },
  mcp: { gh: { type: "local", command: ["gh-mcp"], env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_mcp_0005" } } }
} as unknown as ConfigInfo

/** Lathe's environment: one variable per class of secret, each under a name the old rule let through. */
const baseEnv = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: "/home/someone",
  EDITOR: "vi",
  GIT_AUTHOR_NAME: "Someone",
  SSH_AUTH_SOCK: "/tmp/ssh-agent.sock",
  // By name (the widened rule).
  GH_PAT: "ghp_pat_0006",
  CORP_AUTH: "corp-auth-0007",
  SENTRY_DSN: "https://k@o.ingest.sentry.io/1",
  MYSQL_PASSWD: "passwd-0008",
  // A URL with a password, under any name.
  DATABASE_URL: "postgres://u:db-pw-0009@h/db",
  // By value: copies of what the config holds, under innocent names.
  PROVIDER_COPY: "sk-corp-apikey-0001",
  HEADER_COPY: "corp-header-0002",
  OPTIONS_COPY: "sk-options-0003",
  STORE_COPY: "postgres://lathe:store-pw-0004@db/lathe",
  MCP_COPY: "ghp_mcp_0005",
  EMBEDDED: "prefix:sk-corp-apikey-0001:suffix"
}
const SECRET_VALUES = [
  "ghp_pat_0006",
  "corp-auth-0007",
  "o.ingest.sentry.io",
  "passwd-0008",
  "db-pw-0009",
  "sk-corp-apikey-0001",
  "corp-header-0002",
  "sk-options-0003",
  "store-pw-0004",
  "ghp_mcp_0005"
]

/** The NAME=value lines `env` printed. */
const lines = (output: string): Array<string> => output.split("\n\n")[0]?.split("\n") ?? []

describe("bash: every secret class stays out of commands", () => {
  it("plain bash with the same environment shows every secret (what the probe found)", () => {
    const out = spawnSync("bash", ["-c", "env"], { env: baseEnv, encoding: "utf8" }).stdout
    for (const value of SECRET_VALUES) expect(out).toContain(value)
  })

  it("env through the bash tool, with the secrets the config holds, shows none and keeps the ordinary ones", async () => {
    // The host's values, as the tools plugin gets them in its context (`ctx.secrets`, `ctx.secretNames`).
    const options = bashOptionsFromConfig(info, { secrets: secretValues({ info }), secretNames: PROVIDER_KEY_NAMES })
    const bash = createBashTool({ ...options, sandbox: { mode: "off" }, baseEnv })
    const out = await runTool(bash, { command: "env", description: "Show env" }, { root: tempDir() })
    for (const value of SECRET_VALUES) expect(out.output).not.toContain(value)
    const seen = lines(out.output)
    for (const kept of [
      "EDITOR=vi",
      "HOME=/home/someone",
      "GIT_AUTHOR_NAME=Someone",
      "SSH_AUTH_SOCK=/tmp/ssh-agent.sock"
    ])
      expect(seen).toContain(kept)
  })

  it("the host's scrubEnv drops each by name or by value, and inherit still passes a named one", () => {
    const secrets = secretValues({ info })
    const { env, dropped } = scrubEnv(baseEnv, { secrets, inherit: ["GH_PAT"] })
    expect(env.GH_PAT).toBe("ghp_pat_0006")
    expect([...dropped].sort()).toEqual(
      [
        "CORP_AUTH",
        "SENTRY_DSN",
        "MYSQL_PASSWD",
        "DATABASE_URL",
        "PROVIDER_COPY",
        "HEADER_COPY",
        "OPTIONS_COPY",
        "STORE_COPY",
        "MCP_COPY",
        "EMBEDDED"
      ].sort()
    )
  })
})

describe.runIf(process.platform === "linux")("the sandboxed CommandRunner plugins get", () => {
  const layer = (root: string) =>
    sandboxedCommandRunner({ tempDir: tempDir(), truncationDir: tempDir(), baseEnv }).pipe(
      Layer.provideMerge(Config.layerTest(info as never)),
      Layer.provideMerge(Paths.layerTest(root))
    )

  it.effect("runs a program inside bubblewrap, in the project, with no secret in its environment", () => {
    const root = tempDir()
    return Effect.gen(function* () {
      writeFileSync(join(root, "probe.sh"), '#!/bin/sh\necho "pid1=$(cat /proc/1/comm)"\nenv\necho "cwd=$(pwd)"\n', {
        mode: 0o755
      })
      const runner = yield* CommandRunner
      const result = yield* runner.run(join(root, "probe.sh"), [])
      expect(result.exitCode).toBe(0)
      expect(result.stdout).toContain("pid1=bwrap")
      expect(result.stdout).toContain(`cwd=${root}`)
      expect(result.stdout).toContain("EDITOR=vi")
      // The config's credentials and every secret-looking variable of Lathe's own environment are gone.
      for (const value of SECRET_VALUES) expect(result.stdout).not.toContain(value)
      const missing = yield* runner.run(join(root, "missing.sh"), [], { timeoutMs: 5_000 })
      expect(missing.exitCode).not.toBe(0)
    }).pipe(Effect.provide(layer(root)))
  })
})
