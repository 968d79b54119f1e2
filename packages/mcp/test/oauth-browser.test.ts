/** Which sign-in URLs a server can make Lathe open, and how: a real opener process on PATH records what it got. */
import { spawn } from "node:child_process"
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { browserCommand, browserRefusal, openSystemBrowser } from "../src/oauth-callback.js"

/** A folder with an `xdg-open` that writes each argument it got on its own line to `log`. */
const fakeOpener = () => {
  const dir = mkdtempSync(join(tmpdir(), "lathe-opener-"))
  const log = join(dir, "opened.log")
  const opener = join(dir, "xdg-open")
  writeFileSync(opener, `#!/bin/sh\nfor arg in "$@"; do printf '%s\\n' "$arg" >> "${log}"; done\n`)
  chmodSync(opener, 0o755)
  return { env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ""}` }, log }
}

/** The opener's log once it holds a whole line (the script may have created the file and not yet written it). */
const waitFor = async (file: string) => {
  const whole = () => existsSync(file) && readFileSync(file, "utf8").endsWith("\n")
  for (let i = 0; i < 500 && !whole(); i++) await new Promise((resolve) => setTimeout(resolve, 20))
  return readFileSync(file, "utf8")
}

describe("opening the sign-in page", () => {
  it("opens https, and http only on this machine; refuses file:, custom schemes and remote http", () => {
    expect(browserRefusal(new URL("https://auth.example/authorize?a=1&b=2"))).toBeUndefined()
    expect(browserRefusal(new URL("http://127.0.0.1:9000/authorize"))).toBeUndefined()
    expect(browserRefusal(new URL("http://localhost:9000/authorize"))).toBeUndefined()
    expect(browserRefusal(new URL("http://[::1]:9000/authorize"))).toBeUndefined()
    expect(browserRefusal(new URL("http://auth.example/authorize"))).toContain("only on this machine")
    for (const url of ["file:///etc/passwd", "ms-settings:privacy", "vscode://evil/run", "javascript:alert(1)"])
      expect(browserRefusal(new URL(url)), url).toContain("only https://")
  })

  it("never goes through a shell: on Windows the URL is one argument of rundll32, `&` and all", () => {
    const url = new URL("https://auth.example/authorize?a=1&calc=%22&x=|whoami")
    expect(browserCommand(url, "win32")).toEqual({
      command: "rundll32",
      args: ["url.dll,FileProtocolHandler", url.href]
    })
    expect(browserCommand(url, "darwin")).toEqual({ command: "open", args: [url.href] })
    expect(browserCommand(url, "linux")).toEqual({ command: "xdg-open", args: [url.href] })
  })

  it.skipIf(process.platform === "win32")(
    "a refused URL starts nothing (an unchecked opener would hand it to its handler); a good one arrives whole",
    async () => {
      // Without the check: the opener is started with whatever the server sent.
      const unchecked = fakeOpener()
      spawn("xdg-open", ["file:///etc/passwd"], { env: unchecked.env, stdio: "ignore" })
      expect(await waitFor(unchecked.log)).toBe("file:///etc/passwd\n")

      const checked = fakeOpener()
      await expect(openSystemBrowser(new URL("file:///etc/passwd"), { env: checked.env })).rejects.toThrow(
        "only https://"
      )
      await expect(openSystemBrowser(new URL("http://auth.example/"), { env: checked.env })).rejects.toThrow(
        "only on this machine"
      )
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(existsSync(checked.log)).toBe(false)

      const url = new URL("https://auth.example/authorize?state=a&redirect_uri=x;$(touch /tmp/pwned)")
      await openSystemBrowser(url, { env: checked.env })
      expect(await waitFor(checked.log)).toBe(`${url.href}\n`)
    }
  )
})
