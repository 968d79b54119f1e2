/// <reference lib="dom" />
// (The callbacks given to page.evaluate and page.$eval run in the page: they are typed with the DOM.)
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import puppeteer, { type Browser, type Page } from "puppeteer-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { byScenario } from "./serve-helpers.js"

// `lathe web` in a real headless Chromium (Debian's package): a real server process from source, the scripted
// model, and the page driven as a person would (clicks, typing, the keyboard). Screenshots go to
// packages/cli/test-artifacts/ (gitignored) for a person to look at.
const CHROMIUM = "/usr/bin/chromium"
const artifacts = fileURLToPath(new URL("../test-artifacts/", import.meta.url))
const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const tsx = import.meta.resolve("tsx")

let model: ScriptedServer
let box: ReturnType<typeof sandbox>
let env: Record<string, string>
let child: ChildProcess
let base: string
let openUrl: string
let token: string
let browser: Browser
let runSession: string

const startWeb = (cwd: string): Promise<{ url: string; open: string }> =>
  new Promise((resolve, reject) => {
    child = spawn(process.execPath, ["--conditions=@lathe/source", "--import", tsx, bin, "web", "--port", "0"], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    const timer = setTimeout(() => reject(new Error(`lathe web did not start\n${stdout}\n${stderr}`)), 30_000)
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
      const match = /^listening on (\S+)\nopen (\S+)\n/.exec(stdout)
      if (match?.[1] && match[2]) {
        clearTimeout(timer)
        resolve({ url: match[1], open: match[2] })
      }
    })
  })

const api = async (path: string, body?: unknown) => {
  const response = await fetch(`${base}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return (await response.json()) as unknown
}

/** A fresh tab that already holds the token (as after opening the printed URL once). */
const signedInPage = async (hash = "#/"): Promise<Page> => {
  const page = await browser.newPage()
  await page.setViewport({ width: 1200, height: 900 })
  await page.goto(openUrl)
  await page.waitForSelector("main h1")
  if (hash !== "#/") await page.evaluate((h) => (location.hash = h), hash)
  return page
}

const textOf = (page: Page) => page.evaluate(() => document.body.textContent ?? "")

beforeAll(async () => {
  model = await startScriptedServer(
    byScenario({
      write: (_request, step) =>
        step === 0
          ? { steps: [{ tool: "write", input: { filePath: "hello.txt", content: "hello from the agent\n" } }] }
          : { steps: [{ text: "Wrote **hello.txt**." }] },
      live: () => ({ steps: Array.from({ length: 10 }, (_, i) => ({ text: `live part ${i} ` })), delayMs: 150 }),
      ask: (_request, step) =>
        step === 0
          ? { steps: [{ tool: "read", input: { filePath: "secret.env" } }] }
          : { steps: [{ text: "Read the secret file." }] },
      task: (_request, step) =>
        step === 0
          ? {
              steps: [
                {
                  tool: "task",
                  input: { description: "look around", prompt: "[child] look around", subagent_type: "general" }
                }
              ]
            }
          : { steps: [{ text: "The subagent is done." }] },
      // Slow enough that the page sees the task call running.
      child: () => ({
        steps: [
          ...Array.from({ length: 6 }, (_, i) => ({ text: `looking ${i} ` })),
          { text: "The child looked around." }
        ],
        delayMs: 250
      })
    })
  )
  box = sandbox()
  writeFileSync(join(box.project, "secret.env"), "TOKEN=abc\n")
  env = { ...box.env, LATHE_BASE_URL: model.url, LATHE_MODEL: "m" }
  // The session the list must show: made by a scripted `lathe run`, before the server starts.
  const run = await runLathe(["run", "--format", "json", "[write] make hello.txt"], { cwd: box.project, env })
  assert.strictEqual(run.code, 0, run.stderr)
  runSession = String(run.events.find((e) => "sessionID" in e)?.sessionID)
  const started = await startWeb(box.project)
  base = started.url
  openUrl = started.open
  token = decodeURIComponent(/#token=(.+)$/.exec(openUrl)?.[1] ?? "")
  assert.notStrictEqual(token, "")
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
  })
  mkdirSync(artifacts, { recursive: true })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  child?.kill("SIGKILL")
  await model?.close()
})

// Each test waits on a real turn (up to 20 s under CI load) on top of the page: more than the shared 20 s default.
describe("lathe web in a browser", { timeout: 45_000 }, () => {
  it("shows only the token page without a token, and with a wrong one", async () => {
    const page = await browser.newPage()
    await page.goto(`${base}/`)
    await page.waitForSelector("input#token")
    let text = await textOf(page)
    assert.include(text, "Token")
    assert.notInclude(text, runSession)
    assert.isNull(await page.$("table.sessions"))

    await page.goto(`${base}/#token=wrong-token`)
    await page.reload()
    await page.waitForSelector("[role=alert]")
    text = await textOf(page)
    assert.include(text, "refused")
    assert.notInclude(text, runSession)
    assert.notInclude(page.url(), "wrong-token")
    // The wrong token was forgotten: the tab holds nothing the server accepts.
    assert.isNull(await page.evaluate(() => sessionStorage.getItem("lathe.token")))

    // Typing the right token into the form opens the list.
    await page.type("input#token", token)
    await page.keyboard.press("Enter")
    await page.waitForSelector(`tr[data-session="${runSession}"]`)
    await page.close()
  })

  it("lists the session of a scripted lathe run and shows its timeline, charts and diff", async () => {
    const page = await signedInPage()
    // The token left the address bar for the tab's storage.
    assert.notInclude(page.url(), "token")
    assert.strictEqual(await page.evaluate(() => sessionStorage.getItem("lathe.token")), token)
    await page.waitForSelector(`tr[data-session="${runSession}"]`)
    // Totals come from the summaries route (one store query): 2 steps (the write, then the answer).
    await page.waitForFunction(
      (id) => document.querySelector(`tr[data-session="${id}"] td:nth-of-type(4)`)?.textContent === "2",
      {},
      runSession
    )
    const row = await page.$eval(`tr[data-session="${runSession}"]`, (el) =>
      [...el.querySelectorAll("td")].map((td) => td.textContent ?? "")
    )
    // Agent, model, tokens and files changed (1: hello.txt) are filled in.
    assert.strictEqual(row[1], "build")
    assert.match(row[2] ?? "", /m$/)
    assert.strictEqual(row[6], "1")
    await page.screenshot({ path: join(artifacts, "web-list.png") })
    // The list's data is one paginated request, not every session's messages.
    const summaries = (await api("/sessions/summaries?limit=1")) as {
      sessions: Array<{ session: { id: string }; summary: { steps: number; files: number; cost: number } }>
      total: number
    }
    assert.strictEqual(summaries.sessions.length, 1)
    assert.isAtLeast(summaries.total, 1)

    await page.click(`tr[data-session="${runSession}"] a`)
    await page.waitForSelector(".tool[data-tool=write] .tool-output")
    const output = await page.$eval(".tool[data-tool=write] .tool-output", (el) => el.textContent ?? "")
    assert.match(output, /\S/)
    assert.include(await page.$eval(".tool[data-tool=write] .tool-input", (el) => el.textContent ?? ""), "hello.txt")
    // What allowed the write: the built-in default rule ("*": allow), as recorded on the tool part.
    const allowed = await page.$eval(".tool[data-tool=write] .permission", (el) => [
      el.getAttribute("data-by"),
      el.textContent ?? ""
    ])
    assert.strictEqual(allowed[0], "default")
    assert.include(allowed[1], '* "*" allow · defaults')
    // The answer's Markdown is rendered (bold), not shown as source.
    assert.strictEqual(await page.$eval(".message.assistant strong", (el) => el.textContent), "hello.txt")

    // One bar (one table row) per step in each chart, and a drawn canvas.
    const messages = (await api(`/sessions/${runSession}/messages`)) as Array<{ parts: Array<{ type: string }> }>
    const steps = messages.flatMap((m) => m.parts).filter((p) => p.type === "step-finish").length
    assert.strictEqual(steps, 2)
    for (const chart of ["chart-time", "chart-tokens"]) {
      assert.strictEqual((await page.$$(`table[data-chart=${chart}] tbody tr`)).length, steps)
      const size = await page.$eval(`#${chart} canvas`, (c) => [
        (c as HTMLCanvasElement).width,
        (c as HTMLCanvasElement).height
      ])
      assert.isAbove(size[0] ?? 0, 100)
    }
    assert.include(await page.$eval(".diff", (el) => el.textContent ?? ""), "+hello from the agent")
    await page.screenshot({ path: join(artifacts, "web-session.png"), fullPage: true })
    // The same diff side by side: the new line on the right.
    await page.click("button[aria-pressed]")
    assert.strictEqual(await page.$eval("table.diff td.add", (el) => el.textContent), "hello from the agent")

    // Per step: the select offers the turn and the step that wrote; the step's own diff comes from its snapshots.
    const ranges = await page.$$eval("select#diff-range option", (options) => options.map((o) => o.textContent))
    assert.deepStrictEqual(ranges, ["the whole session", "turn 1", "step 1"])
    const step = await page.$eval("select#diff-range option:last-child", (o) => (o as HTMLOptionElement).value)
    await page.select("select#diff-range", step)
    await page.waitForSelector(`.diff-status[data-shown="${step}"]`)
    // Still side by side (the view keeps its mode), now the step's own diff.
    assert.strictEqual(await page.$eval("table.diff td.add", (el) => el.textContent), "hello from the agent")
    const [from, to] = step.split("..")
    const stepDiff = (await api(`/sessions/${runSession}/diff?from=${from}&to=${to}`)) as {
      files: Array<{ file: string; status: string }>
    }
    assert.deepStrictEqual(
      stepDiff.files.map((f) => [f.file, f.status]),
      [["hello.txt", "added"]]
    )
    // Only snapshots the session recorded are diffed: anything else is refused before git sees it.
    const refused = await fetch(`${base}/sessions/${runSession}/diff?from=HEAD~1`, {
      headers: { authorization: `Bearer ${token}` }
    })
    assert.strictEqual(refused.status, 400)

    // Accessibility basics: landmarks, and every control has a name.
    assert.isNotNull(await page.$("header nav[aria-label]"))
    assert.isNotNull(await page.$("main"))
    const unnamed = await page.evaluate(() =>
      [...document.querySelectorAll("input, textarea, select, button")]
        .filter((el) => {
          const labelled = (el as HTMLInputElement).labels?.length ?? 0
          return labelled === 0 && !el.getAttribute("aria-label") && (el.textContent ?? "").trim() === ""
        })
        .map((el) => el.outerHTML)
    )
    assert.deepStrictEqual(unnamed, [])
    await page.close()
  })

  it("shows a live session's new step without a reload", async () => {
    const created = (await api("/sessions", {})) as { id: string }
    const page = await signedInPage(`#/s/${created.id}`)
    await page.waitForSelector("#act-title")
    await page.evaluate(() => {
      ;(window as unknown as { notReloaded: boolean }).notReloaded = true
    })
    await api(`/sessions/${created.id}/prompt`, { text: "[live] stream something" })
    await page.waitForFunction(() => (document.body.textContent ?? "").includes("live part 9"), { timeout: 20_000 })
    assert.isTrue(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded === true))
    await page.close()
  })

  it("sends a prompt and answers a permission ask from the page, with the keyboard, and the run goes on", async () => {
    const created = (await api("/sessions", {})) as { id: string }
    const page = await signedInPage(`#/s/${created.id}`)
    await page.waitForSelector("textarea#prompt")
    await page.type("textarea#prompt", "[ask] read secret.env")
    await page.click("form button[type=submit]")
    await page.waitForSelector(".asks button", { timeout: 20_000 })
    assert.isNotNull(await page.$("section.asks h2"))
    // Reach "Allow once" with Tab alone, and press it with Enter.
    let reached = false
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press("Tab")
      reached = await page.evaluate(() => document.activeElement?.textContent === "Allow once")
    }
    assert.isTrue(reached, "Allow once is not reachable with Tab")
    await page.keyboard.press("Enter")
    await page.waitForFunction(() => (document.body.textContent ?? "").includes("Read the secret file."), {
      timeout: 20_000
    })
    assert.isNull(await page.$(".asks"))
    // The read was allowed by the person's answer, and the page says so on the call.
    await page.waitForSelector(".tool[data-tool=read] .permission[data-by=person]")
    assert.include(await page.$eval(".tool[data-tool=read] .permission", (el) => el.textContent ?? ""), "once")
    await page.close()
  })

  it("nests a subagent's session under its task call, live while it runs, loaded when opened", async () => {
    const created = (await api("/sessions", {})) as { id: string }
    const page = await signedInPage(`#/s/${created.id}`)
    await page.waitForSelector("#act-title")
    await api(`/sessions/${created.id}/prompt`, { text: "[task] send a subagent" })
    // While the call runs, the event stream has already named its child session: it is nested before the call ends.
    await page.waitForSelector(".tool.running[data-tool=task] details.subagent", { timeout: 20_000 })
    await page.waitForFunction(() => (document.body.textContent ?? "").includes("The subagent is done."), {
      timeout: 20_000
    })
    const nested = ".tool[data-tool=task] details.subagent"
    await page.waitForSelector(nested)
    // Nested once, under the call (a subtask part naming the same child is not shown a second time).
    assert.strictEqual((await page.$$("details.subagent")).length, 1)
    // Folded and not loaded until opened; opened from the keyboard, it shows the child's own timeline.
    assert.isNull(await page.$(`${nested} .timeline`))
    await page.focus(`${nested} > summary`)
    await page.keyboard.press("Enter")
    await page.waitForSelector(`${nested} .timeline .message.assistant`)
    assert.include(await page.$eval(nested, (el) => el.textContent ?? ""), "The child looked around.")
    const child = await page.$eval(nested, (el) => el.getAttribute("data-child"))
    const info = (await api(`/sessions/${child}`)) as { parentID?: string }
    assert.strictEqual(info.parentID, created.id)
    await page.close()
  })
})
