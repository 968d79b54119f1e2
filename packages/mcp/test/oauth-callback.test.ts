/** The one-shot loopback listener, driven with real HTTP requests on 127.0.0.1. */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "vitest"
import { McpAuthError, startLoopbackCallback } from "../src/oauth.js"

const visit = async (url: string) => {
  const response = await fetch(url)
  return { status: response.status, body: await response.text() }
}

describe("loopback callback", () => {
  it("hands over the code for the expected state, then stops listening", async () => {
    const callback = await startLoopbackCallback("remote")
    callback.expectState("s1")
    expect(callback.redirectUrl).toBe(`http://127.0.0.1:${callback.port}/callback`)
    expect((await visit(`http://127.0.0.1:${callback.port}/favicon.ico`)).status).toBe(404)
    const page = await visit(`${callback.redirectUrl}?code=abc&state=s1`)
    expect(page).toEqual({ status: 200, body: expect.stringContaining("signed in to remote") })
    expect(await callback.waitForCode(1000)).toBe("abc")
    await expect(fetch(callback.redirectUrl)).rejects.toThrow()
  })

  it("refuses a redirect before any state was sent, or with a missing code", async () => {
    const early = await startLoopbackCallback("remote")
    expect((await visit(`${early.redirectUrl}?code=abc&state=anything`)).status).toBe(400)
    await expect(early.waitForCode(1000)).rejects.toMatchObject({ reason: "state-mismatch" })

    const empty = await startLoopbackCallback("remote")
    empty.expectState("s1")
    expect((await visit(`${empty.redirectUrl}?state=s1`)).status).toBe(400)
    await expect(empty.waitForCode(1000)).rejects.toMatchObject({ reason: "oauth" })
  })

  it("escapes what the authorization server said before showing it", async () => {
    const callback = await startLoopbackCallback("remote")
    callback.expectState("s1")
    const page = await visit(`${callback.redirectUrl}?state=s1&error=access_denied&error_description=%3Cscript%3E`)
    expect(page.status).toBe(400)
    expect(page.body).not.toContain("<script>")
    const error = await callback.waitForCode(1000).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(McpAuthError)
    expect(error).toMatchObject({ reason: "denied", message: expect.stringContaining("access_denied (<script>)") })
  })

  it("times out with a message that says what to do", async () => {
    const callback = await startLoopbackCallback("remote")
    await expect(callback.waitForCode(50)).rejects.toMatchObject({
      reason: "timeout",
      message: expect.stringMatching(/not finished within 1 second\..*lathe mcp auth remote/)
    })
    await callback.close()
  })

  it("says which port is taken", async () => {
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve))
    const port = (blocker.address() as AddressInfo).port
    try {
      await expect(startLoopbackCallback("remote", port)).rejects.toMatchObject({
        reason: "callback",
        message: expect.stringContaining(`Port ${port} on 127.0.0.1 is taken`)
      })
    } finally {
      await new Promise((resolve) => blocker.close(resolve))
    }
  })
})
