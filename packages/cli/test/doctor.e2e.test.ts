import { mkdirSync, symlinkSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { whyNoWatch } from "@lathe/snapshot"
import { findOnPath } from "@lathe/tools"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// A model server that answers, so the model lines pass and these tests see only the lines they check.
let modelServer: Server
let modelEnv: Record<string, string> = {}
beforeAll(async () => {
  modelServer = createServer((_request, response) => response.end("{}"))
  await new Promise<void>((resolve) => modelServer.listen(0, "127.0.0.1", resolve))
  const { port } = modelServer.address() as AddressInfo
  modelEnv = { LATHE_BASE_URL: `http://127.0.0.1:${port}/v1`, LATHE_MODEL: "test-model" }
})
afterAll(() => new Promise<void>((resolve) => modelServer.close(() => resolve())))

// `lathe doctor` as a person runs it: the real CLI, the real git, ripgrep and bubblewrap of this machine.
describe("lathe doctor", () => {
  it("says whether snapshots use the folder watch, and why not", async () => {
    const box = sandbox()
    const on = await runLathe(["doctor"], { cwd: box.project, env: { ...box.env, ...modelEnv } })
    const why = whyNoWatch(box.project, {})
    if (why === undefined)
      assert.match(on.stdout, /^ok {4}snapshot folder watch on: .* \(up to [\d,]+ folders watched\)$/m)
    else assert.include(on.stdout, `snapshot folder watch off (${why})`)
    const off = await runLathe(["doctor"], {
      cwd: box.project,
      env: { ...box.env, ...modelEnv, LATHE_SNAPSHOT_WATCH: "0" }
    })
    assert.match(off.stdout, /^ok {4}snapshot folder watch off \(LATHE_SNAPSHOT_WATCH=0\): every snapshot scans/m)
  })

  it("reports node, git, ripgrep, the sandbox in use, the config files and trust", async () => {
    const box = sandbox()
    writeFileSync(join(box.project, "lathe.json"), JSON.stringify({ sandbox: "off" }))
    const run = await runLathe(["doctor"], { cwd: box.project, env: { ...box.env, ...modelEnv } })
    assert.strictEqual(run.code, 0, run.stdout + run.stderr)
    assert.match(run.stdout, new RegExp(`^ok {4}node {5}${process.version.replace(/\./g, "\\.")}$`, "m"))
    assert.match(run.stdout, /^ok {4}git {6}git version \d/m)
    assert.match(run.stdout, /^ok {4}ripgrep {2}ripgrep \d/m)
    // The untrusted project's "off" is dropped, so the default sandbox applies.
    if (process.platform === "linux")
      assert.match(
        run.stdout,
        /^ok {4}sandbox {2}bubblewrap [\d.]+ \(\/\S*bwrap\), mode workspace-write, network closed \(to open it, merge \{ "sandbox": \{ "network": \["registry\.npmjs\.org"\] \} \} for some hosts, or \{ "sandbox": \{ "network": true \} \} for all, into your config\)$/m
      )
    assert.match(run.stdout, /^ok {4}project .*project, not trusted: its config may only narrow/m)
    assert.include(run.stdout, `project ${join(box.project, "lathe.json")} (untrusted)`)
    assert.match(run.stdout, /^ok {4}notice {3}Ignored from untrusted .*lathe\.json: sandbox "off"/m)
  })

  it("says why there is no sandbox, and fails when the config requires one", async () => {
    const box = sandbox()
    const bin = join(box.dir, "bin")
    mkdirSync(bin)
    const git = findOnPath("git", process.env.PATH)
    if (git) symlinkSync(git, join(bin, "git"))
    const env = { ...box.env, ...modelEnv, PATH: bin }
    const plain = await runLathe(["doctor", "--json"], { cwd: box.project, env })
    assert.strictEqual(plain.code, 0, plain.stdout + plain.stderr)
    const report = JSON.parse(plain.stdout) as {
      ok: boolean
      checks: Array<{ name: string; ok: boolean; detail: string }>
    }
    const check = report.checks.find((c) => c.name === "sandbox")
    assert.isTrue(check?.ok)
    assert.match(check?.detail ?? "", /^none: .*(bubblewrap|sandbox).*; bash runs under the permission rules alone/)

    writeFileSync(join(box.project, "lathe.json"), JSON.stringify({ sandbox: "required" }))
    const required = await runLathe(["doctor"], { cwd: box.project, env })
    assert.strictEqual(required.code, 1)
    assert.match(required.stdout, /^FAIL {2}sandbox {2}none: .*bash is refused \(sandbox required\)/m)
    assert.include(required.stdout, "Something Lathe needs is missing or broken")
  })
})
