import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { McpConnection } from "../src/connection.js"
import { listResources, readResource, resourceMentions, resourceParts } from "../src/resources.js"
import { everythingBin, nodeServer } from "./helpers.js"

describe("@<server>:<uri> mentions", () => {
  it("finds mentions of known servers only, once each, without trailing punctuation", () => {
    const text = "see @docs:file:///a.md, and @docs:file:///a.md again; mail @bob:secret or @x:y (@docs:mem://b)."
    expect(resourceMentions(text, ["docs", "x"])).toEqual([
      { server: "docs", uri: "file:///a.md" },
      { server: "x", uri: "y" },
      { server: "docs", uri: "mem://b" }
    ])
    expect(resourceMentions("a@docs:file:///a.md", ["docs"])).toEqual([])
  })
})

describe("resources of server-everything over stdio", () => {
  const connection = new McpConnection(nodeServer("everything", [everythingBin, "stdio"]))
  const connections = [connection]

  beforeAll(async () => {
    expect(await connection.start()).toMatchObject({ state: "connected" })
  })
  afterAll(() => connection.close())

  it("lists the static resources with their server", async () => {
    const { resources, problems } = await listResources(connections)
    expect(problems).toEqual([])
    expect(resources.length).toBeGreaterThan(0)
    expect(resources[0]).toMatchObject({ server: "everything", uri: expect.stringMatching(/^demo:\/\//) })
  })

  it("reads a text resource (a template's URI too); a binary one is a note", async () => {
    expect(await readResource(connections, "everything", "demo://resource/dynamic/text/3")).toMatch(
      /^Resource 3: This is a plaintext resource/
    )
    expect(await readResource(connections, "everything", "demo://resource/dynamic/blob/3")).toMatch(
      /^\[binary resource demo:\/\/resource\/dynamic\/blob\/3 \(.+\), \d+ bytes: not attached\]$/
    )
  })

  it("attaches each mentioned resource as a synthetic text part; an unreadable one is a problem, not a failure", async () => {
    const { resources } = await listResources(connections)
    const doc = resources.find((r) => r.mimeType === "text/markdown") ?? resources[0]
    const text = `compare @everything:${doc?.uri} with @everything:demo://resource/dynamic/text/1 and @everything:nope://x`
    const { parts, problems } = await resourceParts(text, connections)
    expect(parts).toHaveLength(2)
    expect(parts[0]).toMatchObject({ type: "text", synthetic: true })
    expect(parts[0]?.type === "text" ? parts[0].text : "").toContain(
      `The user attached the MCP resource everything:${doc?.uri}:\n<resource server="everything" uri="${doc?.uri}">`
    )
    expect(parts[1]?.type === "text" ? parts[1].text : "").toMatch(/Resource 1: This is a plaintext resource/)
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatch(/"everything" could not read nope:\/\/x: /)
  })
})
