import { describe, expect, it } from "@effect/vitest"
import { bashOptionsFromConfig, createBashTool } from "../src/bash.js"
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

  it("bashOptionsFromConfig: sandbox defaults, inherit list, every provider key the config holds", () => {
    expect(
      bashOptionsFromConfig({
        provider: {
          anthropic: { apiKey: "sk-a" },
          local: { type: "openai-compatible", options: { apiKey: "sk-b", other: 1 } },
          empty: { apiKey: "" }
        },
        shell: { env: { inherit: ["GH_TOKEN"] } }
      })
    ).toEqual({
      sandbox: { mode: "workspace-write", network: false, required: false },
      inherit: ["GH_TOKEN"],
      secrets: ["sk-a", "sk-b"]
    })
    expect(bashOptionsFromConfig({ sandbox: { mode: "read-only", network: true } }).sandbox).toEqual({
      mode: "read-only",
      network: true,
      required: false
    })
  })
})
