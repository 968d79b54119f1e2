/**
 * Regression: a CI run filled /tmp with ~5,400 entries and a tmux socket there stayed reachable from the sandbox,
 * because the socket scan stopped after a budget of 4,000 entries. The scanned folders' own entries are now always
 * read; only deeper levels have a budget.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { findSockets } from "../src/sandbox-sockets.js"

const servers: Array<Server> = []
const dirs: Array<string> = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const listen = (path: string): Promise<void> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    servers.push(server)
    server.once("error", reject)
    server.listen(path, () => resolve())
  })

describe("findSockets", () => {
  it("finds a socket in a temp dir holding more entries than the scan budget", async () => {
    const temp = realpathSync(mkdtempSync(join(tmpdir(), "lathe-sockets-")))
    dirs.push(temp)
    for (let i = 0; i < 4500; i++) writeFileSync(join(temp, `f${String(i).padStart(5, "0")}`), "")
    const socket = join(temp, "zz-server.sock")
    await listen(socket)
    const project = join(temp, "project")
    mkdirSync(project)
    const hidden = findSockets({ env: {}, tempDir: temp, root: project, keep: [project] })
    assert.include(hidden.sockets, socket)
  })

  it("leaves the project's own sockets usable", async () => {
    const temp = realpathSync(mkdtempSync(join(tmpdir(), "lathe-sockets-")))
    dirs.push(temp)
    const project = join(temp, "project")
    mkdirSync(project)
    const own = join(project, "dev.sock")
    await listen(own)
    const hidden = findSockets({ env: { SOME_SOCKET: own }, tempDir: temp, root: project, keep: [project] })
    assert.notInclude(hidden.sockets, own)
  })
})
