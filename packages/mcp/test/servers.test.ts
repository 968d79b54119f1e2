import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { expandEnv, resolveServers } from "../src/servers.js"
import { tempDir } from "./helpers.js"

/** `${name}` as written in a .mcp.json (built, so no string here looks like a mistaken template). */
const ref = (name: string): string => `$${"{"}${name}}`

const mcpJson = {
  mcpServers: {
    files: { command: "npx", args: ["-y", "fs-server", `${ref("HOME")}/work`], env: { TOKEN: ref("TOKEN") } },
    remote: {
      type: "http",
      url: `https://${ref("HOST:-mcp.example.test")}/mcp`,
      headers: { Authorization: "Bearer {env:TOKEN}" }
    },
    legacy: { type: "sse", url: "https://old.example.test/sse" }
  }
}

const project = (content: unknown = mcpJson) => {
  const root = tempDir()
  writeFileSync(join(root, ".mcp.json"), typeof content === "string" ? content : JSON.stringify(content))
  return root
}

describe("resolveServers", () => {
  it("reads a trusted project's .mcp.json (Claude Code format), expanding $VAR references (plain, with a default) and {env:VAR}", async () => {
    const root = project()
    const { servers, notices } = await resolveServers({
      config: {},
      root,
      trusted: true,
      env: { HOME: "/home/me", TOKEN: "t0k" }
    })
    expect(notices).toEqual([])
    expect(servers).toEqual([
      {
        name: "files",
        source: join(root, ".mcp.json"),
        enabled: true,
        timeout: 10_000,
        wait: false,
        type: "local",
        command: "npx",
        args: ["-y", "fs-server", "/home/me/work"],
        env: { TOKEN: "t0k" },
        cwd: root
      },
      expect.objectContaining({
        name: "remote",
        type: "remote",
        url: "https://mcp.example.test/mcp",
        headers: { Authorization: "Bearer t0k" }
      }),
      expect.objectContaining({ name: "legacy", type: "remote", transport: "sse" })
    ])
  })

  it("the lathe.json mcp block comes first and wins over a .mcp.json server of the same name", async () => {
    const root = project()
    const { servers } = await resolveServers({
      config: {
        mcp: { files: { type: "local", command: ["node", "mine.js"], cwd: "tools", timeout: 500, enabled: false } }
      },
      root,
      trusted: true,
      env: {}
    })
    expect(servers.map((s) => `${s.name}:${s.source === "lathe.json" ? "config" : "file"}`)).toEqual([
      "files:config",
      "remote:file",
      "legacy:file"
    ])
    expect(servers[0]).toMatchObject({
      command: "node",
      args: ["mine.js"],
      cwd: join(root, "tools"),
      timeout: 500,
      enabled: false,
      wait: false
    })
  })

  it("an untrusted project's .mcp.json servers are not started; one notice names them and how to trust", async () => {
    const root = project()
    const { servers, notices } = await resolveServers({ config: {}, root, trusted: false, env: {} })
    expect(servers).toEqual([])
    expect(notices).toEqual([
      `Did not start the MCP servers of ${join(root, ".mcp.json")} (files, remote, legacy): this project is not ` +
        `trusted. Run \`lathe trust\` in ${root} to start them.`
    ])
  })

  it("a broken .mcp.json is a notice that says what is wrong, never a crash", async () => {
    const notJson = await resolveServers({ config: {}, root: project("{ nope"), trusted: true, env: {} })
    expect(notJson.notices[0]).toMatch(/\.mcp\.json: invalid JSON/)
    const wrongShape = await resolveServers({
      config: {},
      root: project({ mcpServers: { x: { args: [] } } }),
      trusted: true,
      env: {}
    })
    expect(wrongShape.servers).toEqual([])
    expect(wrongShape.notices[0]).toMatch(/is not in the \.mcp\.json format .*mcpServers\.x/)
  })

  it("expandEnv leaves text without references alone and empties unset variables", () => {
    expect(expandEnv("plain $HOME text", {})).toBe("plain $HOME text")
    expect(expandEnv(`${ref("UNSET")}|{env:UNSET}|${ref("UNSET:-dflt")}`, {})).toBe("||dflt")
  })
})
