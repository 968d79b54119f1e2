// MCP servers start with the person's environment (proxies, CA bundles, their own variables), as other MCP clients
// start them, less the keys Lathe uses for its model providers unless the server's own config names them. Real stdio
// server processes report what they got.
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { McpConnection } from "../src/connection.js"
import { serverEnvironment } from "../src/environment.js"
import { mcpTools } from "../src/tools.js"
import { nodeServer, runTool } from "./helpers.js"

const probe = fileURLToPath(new URL("./fixtures/probe-server.mjs", import.meta.url))

const userEnv = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: "/home/person",
  HTTPS_PROXY: "http://proxy.corp.example:3128",
  NODE_EXTRA_CA_CERTS: "/etc/ssl/corp-ca.pem",
  npm_config_registry: "https://npm.corp.example/",
  MY_TEAM_SETTING: "blue",
  ANTHROPIC_API_KEY: "sk-ant-person-key-0123456789",
  OPENAI_API_KEY: "sk-openai-person-key-0123456789",
  CORP_LLM_TOKEN: "corp-gateway-secret-0123456789"
}

/**
 * Some of the host's provider key variables (`ctx.secretNames`), and what the host counts as its credentials for
 * `userEnv` with a gateway provider whose `apiKey` is `{env:CORP_LLM_TOKEN}` (the CLI's `mcpCredentials`, tested there).
 */
const PROVIDER_KEYS = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "LATHE_API_KEY"]
const hostCredentials = (...extra: ReadonlyArray<string>) => [
  userEnv.ANTHROPIC_API_KEY,
  userEnv.OPENAI_API_KEY,
  ...extra
]

/** Starts the probe server with `env` as Lathe's environment and returns the environment the server saw. */
const seenBy = async (
  serverEnv: Readonly<Record<string, string>>,
  credentials: ReadonlyArray<string>
): Promise<Record<string, string>> => {
  const connection = new McpConnection(nodeServer("probe", [probe], { env: serverEnv }), {
    env: userEnv,
    credentials,
    credentialNames: PROVIDER_KEYS
  })
  try {
    expect(await connection.start()).toMatchObject({ state: "connected" })
    const tool = mcpTools([connection]).find((t) => t.id === "probe_env")
    if (!tool) throw new Error("the probe's env tool is missing")
    return JSON.parse((await runTool(tool, {}).result).output) as Record<string, string>
  } finally {
    await connection.close()
  }
}

describe("the environment of a local MCP server", () => {
  it("without Lathe: the SDK's default environment drops the proxy, CA and the person's own variables", async () => {
    // What stdio servers got before: only HOME, LOGNAME, PATH, SHELL, TERM, USER (so npx behind a proxy hung).
    const { getDefaultEnvironment, DEFAULT_INHERITED_ENV_VARS } = await import(
      "@modelcontextprotocol/sdk/client/stdio.js"
    )
    expect(DEFAULT_INHERITED_ENV_VARS).not.toContain("HTTPS_PROXY")
    expect(Object.keys(getDefaultEnvironment())).not.toContain("NODE_EXTRA_CA_CERTS")
  })

  it("has the person's proxy, CA bundle, npm settings and own variables, and not Lathe's provider keys", async () => {
    const credentials = hostCredentials(userEnv.CORP_LLM_TOKEN)
    const env = await seenBy({}, credentials)
    expect(env.HTTPS_PROXY).toBe(userEnv.HTTPS_PROXY)
    expect(env.NODE_EXTRA_CA_CERTS).toBe(userEnv.NODE_EXTRA_CA_CERTS)
    expect(env.npm_config_registry).toBe(userEnv.npm_config_registry)
    expect(env.MY_TEAM_SETTING).toBe("blue")
    expect(env.HOME).toBe("/home/person")
    expect(env).not.toHaveProperty("ANTHROPIC_API_KEY")
    expect(env).not.toHaveProperty("OPENAI_API_KEY")
    // A provider's `apiKey: "{env:CORP_LLM_TOKEN}"`: the variable holding it is Lathe's credential too.
    expect(env).not.toHaveProperty("CORP_LLM_TOKEN")
    expect(JSON.stringify(env)).not.toContain("person-key")
  })

  it("gets a provider key when its own config names it, and its env wins over the person's", async () => {
    const env = await seenBy(
      { ANTHROPIC_API_KEY: userEnv.ANTHROPIC_API_KEY, MY_TEAM_SETTING: "red" },
      hostCredentials()
    )
    expect(env.ANTHROPIC_API_KEY).toBe(userEnv.ANTHROPIC_API_KEY)
    expect(env.MY_TEAM_SETTING).toBe("red")
    expect(env).not.toHaveProperty("OPENAI_API_KEY")
  })

  it("serverEnvironment: a variable containing a long credential goes, exported shell functions go", () => {
    const env = serverEnvironment(
      { env: {} },
      {
        PATH: "/bin",
        AUTH_HEADER: "Bearer corp-gateway-secret-0123456789",
        BASH_FUNC_x: "() { echo hi; }",
        SHORT: "none"
      },
      ["corp-gateway-secret-0123456789", "none"]
    )
    expect(env).toEqual({ PATH: "/bin" })
  })
})
