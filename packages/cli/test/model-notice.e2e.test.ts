/**
 * "Correct where real use goes, again": advice that works. The "not in the catalogue" notice for an uncatalogued
 * model appears on the first `lathe run` only (remembered in the data dir), and its snippet, pasted into the person's
 * lathe.json exactly as printed, sets the limits and leaves every later command working, with or without
 * LATHE_BASE_URL (the first trial's snippet broke every run without it).
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

const servers: Array<ScriptedServer> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

const NOTICE = "not in Lathe's model catalogue"

describe("the not-in-the-catalogue notice (end to end)", () => {
  it("is shown on the first run only; its snippet, pasted as printed, loads and sets the limits", async () => {
    const server = await startScriptedServer(() => ({ steps: [{ text: "Hello." }] }))
    servers.push(server)
    const box = sandbox()
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "uncatalogued-e2e-model" }
    const run = () => runLathe(["run", "say hello"], { cwd: box.project, env, timeoutMs: 60_000 })

    const first = await run()
    assert.strictEqual(first.code, 0, first.stderr)
    const notice = first.stderr.split("\n").find((line) => line.includes(NOTICE))
    assert.isDefined(notice, first.stderr)
    const second = await run()
    assert.strictEqual(second.code, 0, second.stderr)
    assert.notInclude(second.stderr, NOTICE, "told once: not again on the next run")

    // The person pastes the printed block into their own lathe.json, as is.
    const snippet = /per million tokens\): (\{.*\})\. This notice/.exec(notice ?? "")?.[1]
    assert.isDefined(snippet, notice)
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    writeFileSync(join(box.dir, "config", "lathe", "lathe.json"), `${snippet}\n`)
    const doctor = await runLathe(["doctor", "--json"], { cwd: box.project, env, timeoutMs: 60_000 })
    const checks = (JSON.parse(doctor.stdout) as { checks: Array<{ name: string; detail: string }> }).checks
    const model = checks.find((check) => check.name === "model")
    assert.include(model?.detail, "env/uncatalogued-e2e-model (uncatalogued-e2e-model, 128,000-token context)")
    // Without LATHE_BASE_URL the block has no server to add to, and nothing fails to load.
    const { LATHE_BASE_URL: _url, LATHE_MODEL: _model, ...plain } = env
    const without = await runLathe(["doctor"], { cwd: box.project, env: plain, timeoutMs: 60_000 })
    assert.notInclude(without.stdout + without.stderr, "provider.env.type")
    assert.notInclude(without.stdout, "FAIL  config")
  }, 180_000)

  it('is never shown with "models": { "notice": false } in the person\'s config', async () => {
    const server = await startScriptedServer(() => ({ steps: [{ text: "Hello." }] }))
    servers.push(server)
    const box = sandbox()
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    writeFileSync(join(box.dir, "config", "lathe", "lathe.json"), '{ "models": { "notice": false } }\n')
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "quiet-e2e-model" }
    const run = await runLathe(["run", "say hello"], { cwd: box.project, env, timeoutMs: 60_000 })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.notInclude(run.stderr, NOTICE)
  }, 120_000)
})
