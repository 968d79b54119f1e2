import { describe, expect, it } from "@effect/vitest"
import { assignToolNames, MAX_TOOL_NAME, sanitizeName } from "../src/names.js"

describe("tool names", () => {
  it("sanitises characters outside [A-Za-z0-9_-] to _", () => {
    expect(sanitizeName("my.server/tool name:v2-ok_1")).toBe("my_server_tool_name_v2-ok_1")
    expect(assignToolNames([{ server: "git hub", tool: "create.issue" }])[0]?.name).toBe("git_hub_create_issue")
  })

  it("cuts names to 64 characters", () => {
    const [named] = assignToolNames([{ server: "s", tool: "x".repeat(100) }])
    expect(named?.name).toHaveLength(MAX_TOOL_NAME)
    expect(named?.name.startsWith("s_xxx")).toBe(true)
  })

  it("resolves collisions deterministically, whatever order the servers answered in", () => {
    const refs = [
      { server: "a", tool: "b.c" },
      { server: "a", tool: "b_c" },
      { server: "a_b", tool: "c" }
    ]
    const forward = assignToolNames(refs).map((r) => `${r.server}/${r.tool}=${r.name}`)
    const backward = assignToolNames([...refs].reverse()).map((r) => `${r.server}/${r.tool}=${r.name}`)
    expect(forward).toEqual(["a/b.c=a_b_c", "a/b_c=a_b_c_2", "a_b/c=a_b_c_3"])
    expect([...backward].sort()).toEqual([...forward].sort())
  })

  it("a suffixed long name stays within 64 and avoids taken names", () => {
    const long = "y".repeat(80)
    const named = assignToolNames(
      [
        { server: "s", tool: `${long}1` },
        { server: "s", tool: `${long}2` }
      ],
      ["s_echo"]
    )
    expect(named.map((n) => n.name.length)).toEqual([64, 64])
    expect(named[1]?.name.endsWith("_2")).toBe(true)
    expect(assignToolNames([{ server: "s", tool: "echo" }], ["s_echo"])[0]?.name).toBe("s_echo_2")
  })
})
