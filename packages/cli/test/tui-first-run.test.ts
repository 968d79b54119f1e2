import type { Part } from "@lathe/plugin/schema"
import { assert, describe, it } from "vitest"
import { ARM_MS, armExpired } from "../src/tui/arming.js"
import { askKeyAction } from "../src/tui/ask-keys.js"
import { stoppedTool } from "../src/tui/blocks.js"
import { trustPromptLines } from "../src/tui/trust-prompt.js"

interface Pressed {
  readonly reply: string | undefined
  readonly message: string | undefined
  readonly reason: string | undefined
}

/** Feeds keys (one string per key press; "\r" is Enter, "\x1b" Esc) to an ask; returns the reply, if any. */
const press = (keys: ReadonlyArray<string>): Pressed => {
  let reason: string | undefined
  for (const key of keys) {
    const action = askKeyAction(reason, key === "\r" || key === "\x1b" ? "" : key, {
      return: key === "\r",
      escape: key === "\x1b"
    })
    if (action.type === "reply") return { reply: action.reply, message: action.message, reason }
    if (action.type === "reason") reason = action.reason
  }
  return { reply: undefined, message: undefined, reason }
}

describe("permission ask keys", () => {
  it("single key presses on an empty input are the hotkeys", () => {
    assert.deepInclude(press(["\r"]), { reply: "once" })
    assert.deepInclude(press(["o"]), { reply: "once" })
    assert.deepInclude(press(["a"]), { reply: "always" })
    assert.deepInclude(press(["n"]), { reply: "reject", message: undefined })
  })

  it("r opens the reason input, where a lone a is text; Enter rejects with the reason", () => {
    const typed = press(["r", ..."a reason with a".split(""), "\r"])
    assert.strictEqual(typed.reply, "reject")
    assert.strictEqual(typed.message, "a reason with a")
    assert.deepInclude(press(["r", "a"]), { reply: undefined, reason: "a" })
  })

  it("a reason started without r is never a hotkey after its first letter", () => {
    assert.deepInclude(press(["p", "l", "e", "a", "s", "e", "\r"]), { reply: "reject", message: "please" })
    // A chunk (typed faster than it is read, or pasted) is text, whatever letter it starts with.
    assert.deepInclude(press(["avoid ls please", "\r"]), { reply: "reject", message: "avoid ls please" })
  })

  it("Esc closes the reason input and the hotkeys act again; an empty reason rejects without one", () => {
    assert.deepInclude(press(["r", "x", "\x1b"]), { reply: undefined, reason: undefined })
    assert.deepInclude(press(["r", "x", "\x1b", "o"]), { reply: "once" })
    assert.deepInclude(press(["r", "\r"]), { reply: "reject", message: undefined })
  })
})

describe("Esc arming", () => {
  it("a first Esc stays armed while a tool that may change files runs, and runs out once none does", () => {
    const armed = { kind: "esc" as const, at: 0 }
    assert.isFalse(armExpired(armed, 60_000, true))
    assert.isTrue(armExpired(armed, 60_000, false))
    assert.isFalse(armExpired(armed, ARM_MS - 1, false))
  })

  it("a first Ctrl+C runs out after two seconds, tool or not", () => {
    assert.isTrue(armExpired({ kind: "ctrl-c", at: 0 }, ARM_MS, true))
    assert.isFalse(armExpired({ kind: "ctrl-c", at: 0 }, ARM_MS - 1, true))
  })
})

describe("trust prompt", () => {
  it("shows each ignored item with the value it asks for, without escape sequences", () => {
    const lines = trustPromptLines([
      {
        file: "/p/lathe.json",
        items: [
          { name: "plugin", value: ["./tools/deploy.ts", ["npm-thing", { a: 1 }]] },
          {
            name: "mcp servers (fs, web)",
            value: {
              fs: { type: "local", command: ["npx", "-y", "fs-server"] },
              web: { type: "remote", url: "https://mcp.example/x" }
            }
          },
          { name: "provider.local.baseURL", value: "http://evil.example/v1\u001b[2J" },
          { name: "permission allow rules (bash: npm test*)" },
          { name: "shell.env.inherit", value: true }
        ]
      }
    ])
    assert.deepStrictEqual(lines, [
      "/p/lathe.json asks for:",
      "  • plugin (runs its code inside Lathe):",
      "      ./tools/deploy.ts",
      "      npm-thing",
      "  • mcp servers:",
      "      fs: runs npx -y fs-server",
      "      web: connects to https://mcp.example/x",
      '  • provider.local.baseURL: "http://evil.example/v1\\u001b[2J"',
      "  • permission allow rules (bash: npm test*)",
      "  • shell.env.inherit: true"
    ])
  })
})

describe("interrupted, once", () => {
  const tool = (status: "error" | "completed", error = "aborted") =>
    ({
      type: "tool",
      state: status === "error" ? { status, error, input: {}, time: { start: 0, end: 1 } } : { status }
    }) as unknown as Part

  it("a tool the interrupt stopped says it; the message adds no second line", () => {
    assert.isTrue(stoppedTool([tool("error")]))
    assert.isFalse(stoppedTool([tool("error", "exit 1")]))
    assert.isFalse(stoppedTool([tool("completed")]))
  })
})
