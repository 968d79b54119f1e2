import { describe, expect, it } from "@effect/vitest"
import type { PluginConfig } from "@lathe/plugin"
import { pluginContext } from "@lathe/plugin/testing"
import { bashOptionsFromConfig, createBashTool } from "../src/bash.js"
import { createToolsPlugin } from "../src/index.js"
import { commandEnv } from "../src/shell.js"
import { harness, run, tempDir } from "./helpers.js"

const baseEnv = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: "/home/someone",
  ANTHROPIC_API_KEY: "sk-ant-1",
  OPENAI_API_KEY: "sk-oa-2",
  LATHE_API_KEY: "sk-lathe-3",
  GITHUB_TOKEN: "ghp_4",
  db_password: "hunter2",
  AWS_SECRET_ACCESS_KEY: "aws-5",
  NPM_TOKEN: "npm-6",
  LLM_ENDPOINT_CREDENTIAL: "sk-held-7",
  EDITOR: "vi"
}

/** The NAME=value lines `env` printed. */
const lines = (output: string): Array<string> => output.split("\n\n")[0]?.split("\n") ?? []

describe("bash: secrets stay out of commands", () => {
  it("env run through bash sees no provider key, no secret-looking name, no held key value", async () => {
    const h = harness()
    const bash = createBashTool({ baseEnv, secrets: ["sk-held-7"] })
    const out = await run(bash, { command: "env", description: "Show env" }, h.ctx())
    const seen = lines(out.output)
    for (const value of ["sk-ant-1", "sk-oa-2", "sk-lathe-3", "ghp_4", "hunter2", "aws-5", "npm-6", "sk-held-7"])
      expect(out.output).not.toContain(value)
    expect(seen).toContain("EDITOR=vi")
    expect(seen).toContain("HOME=/home/someone")
  })

  it("a name listed in shell.env.inherit is visible, in the sandbox too", async () => {
    const h = harness()
    const bash = createBashTool({
      baseEnv,
      inherit: ["GITHUB_TOKEN"],
      ...(process.platform === "linux"
        ? { sandbox: { mode: "workspace-write" }, tempDir: tempDir(), truncationDir: tempDir() }
        : {})
    })
    const out = await run(bash, { command: "env", description: "Show env" }, h.ctx())
    expect(lines(out.output)).toContain("GITHUB_TOKEN=ghp_4")
    expect(out.output).not.toContain("npm-6")
    if (process.platform === "linux") expect(out.metadata.sandbox).toBe("bubblewrap")
  })

  it("commandEnv names what it dropped; matching is by substring in any case", () => {
    const { env, dropped } = commandEnv(
      { MONKEY_BUSINESS: "1", my_token_file: "2", Passwords: "3", OK: "4", UNSET: undefined },
      { inherit: ["Passwords"] }
    )
    expect(env).toEqual({ Passwords: "3", OK: "4" })
    expect(dropped).toEqual(["MONKEY_BUSINESS", "my_token_file"])
  })

  it("bashOptionsFromConfig: sandbox defaults, inherit list, the host's secrets and provider key variables", () => {
    expect(
      bashOptionsFromConfig(
        { shell: { env: { inherit: ["GH_TOKEN"] } } },
        { secrets: ["sk-a", "sk-b"], secretNames: ["CORP_LLM"], truncationDir: "/data/tool-output" }
      )
    ).toEqual({
      sandbox: { mode: "workspace-write", network: false, required: false },
      inherit: ["GH_TOKEN"],
      secrets: ["sk-a", "sk-b"],
      secretNames: ["CORP_LLM"],
      truncationDir: "/data/tool-output"
    })
    expect(bashOptionsFromConfig({ sandbox: { mode: "read-only", network: true } }).sandbox).toEqual({
      mode: "read-only",
      network: true,
      required: false
    })
  })

  it("shell.env.set lands over the start environment the host gives, read when the options are built", () => {
    const options = bashOptionsFromConfig(
      { shell: { env: { set: { EDITOR: "nano" } } } },
      { startEnv: () => ({ PATH: "/bin", LAUNCHER_ONLY_API_KEY: "k" }) }
    )
    expect(options.baseEnv).toEqual({ PATH: "/bin", LAUNCHER_ONLY_API_KEY: "k", EDITOR: "nano" })
  })
})

describe("the plugin's bash takes its secrets from the context and its start environment from the host", () => {
  /** The plugin's bash, set up over a test context with `secrets` and `secretNames`. */
  const pluginBash = async (root: string, config: PluginConfig, startEnv?: () => NodeJS.ProcessEnv) => {
    const ctx = pluginContext(root, { config, secrets: ["held-value-0001"], secretNames: ["CORP_LLM"] })
    const hooks = await createToolsPlugin(startEnv ? { startEnv } : {}).setup(ctx)
    const bash = hooks.tools?.find((tool) => tool.id === "bash")
    if (!bash) throw new Error("the plugin has no bash tool")
    return bash
  }
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: "/home/someone",
    CORP_LLM: "plain-looking",
    INNOCENT: "held-value-0001",
    EDITOR: "vi"
  }

  it("drops ctx.secretNames by name and ctx.secrets by value; inherit passes a named one", async () => {
    const h = harness()
    const bash = await pluginBash(h.root, { sandbox: { mode: "off" } }, () => env)
    const out = await run(bash, { command: "env", description: "Show env" }, h.ctx())
    expect(out.output).not.toContain("plain-looking")
    expect(out.output).not.toContain("held-value-0001")
    expect(lines(out.output)).toContain("EDITOR=vi")
    const inherited = await pluginBash(
      h.root,
      { sandbox: { mode: "off" }, shell: { env: { inherit: ["CORP_LLM"] } } },
      () => env
    )
    const again = await run(inherited, { command: "env", description: "Show env" }, h.ctx())
    expect(lines(again.output)).toContain("CORP_LLM=plain-looking")
  })

  it("a key only the host's start environment holds (the launcher's) is scrubbed, and reaches commands when inherited", async () => {
    const h = harness()
    const start = () => ({ ...process.env, LAUNCHED_API_KEY: "sk-launched-0002" })
    const off = { sandbox: { mode: "off" as const } }
    const plain = await run(await pluginBash(h.root, off, start), { command: "env", description: "Env" }, h.ctx())
    expect(plain.output).not.toContain("sk-launched-0002")
    const inherit = { ...off, shell: { env: { inherit: ["LAUNCHED_API_KEY"] } } }
    const passed = await run(await pluginBash(h.root, inherit, start), { command: "env", description: "Env" }, h.ctx())
    expect(lines(passed.output)).toContain("LAUNCHED_API_KEY=sk-launched-0002")
  })
})
