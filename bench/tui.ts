/**
 * The interactive UI's performance targets (issue "Interactive terminal UI: `lathe` with no arguments"):
 *
 * 1. First frame: the bundled CLI (what users run) in an 80×24 pty, from spawn until its first frame is on screen
 *    (the "starting" frame drawn before the services load) and until the footer says "ready",
 *    against `node -e 0` and `node lathe.js --version` (spawn to exit) in the same run. Median of 7. Target ≤ 300 ms.
 * 2. Frame cost per streamed delta: the App's layout (transcript pane, editor, footer) rendered by Ink to a fake
 *    80×24 terminal (React, Yoga, output diffing), on a 2,000-message transcript while 2,000 `part.delta` events
 *    stream into a new answer, one full frame per delta; against the same on a 10-message transcript.
 *    Target: no frame over 16 ms.
 * 3. Memory: heapUsed after GC with the tail rendered at 500 / 1,000 / 2,000 messages (transcript data and the
 *    renderer's share apart, a fresh process per size), and its growth across the 2,000 deltas.
 *
 * Build the bundle first (`npx nx run @lathe/cli:bundle`), then from the repo root:
 *
 *   npx tsx --conditions=@lathe/source bench/tui.ts
 */

import { execFileSync, spawnSync } from "node:child_process"
import { EventEmitter } from "node:events"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PassThrough } from "node:stream"
import { fileURLToPath } from "node:url"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { startScriptedServer } from "@lathe/core/testing"
import type { LatheEvent } from "@lathe/plugin/schema"
import { Box, render } from "ink"
import { createElement } from "react"
import { createStyle } from "../packages/cli/src/style.js"
import { Lines, TranscriptPane } from "../packages/cli/src/tui/app.js"
import { TranscriptView } from "../packages/cli/src/tui/blocks.js"
import { emptyEditor } from "../packages/cli/src/tui/editor.js"
import { editorPanel, footerLine, statusOf } from "../packages/cli/src/tui/panels.js"
import { Transcript } from "../packages/cli/src/tui/transcript.js"
import { spawnTerminal } from "../packages/cli/test/pty.js"

const COLS = 80
const ROWS = 24
const DELTAS = 2_000
const bundle = new URL("../packages/cli/dist/bundle/lathe.js", import.meta.url).pathname
const fixture = new URL("../packages/cli/test/fixtures/session-events.jsonl", import.meta.url)

// GC on demand without asking for --expose-gc on the command line.
setFlagsFromString("--expose-gc")
const gc = (globalThis.gc ?? runInNewContext("gc")) as () => void

const out = (line = "") => process.stdout.write(`${line}\n`)
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN
const quantile = (sorted: Float64Array, q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
const ms = (x: number | undefined) => `${(x ?? NaN).toFixed(2)} ms`
const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`
const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

// ── 1. first frame ────────────────────────────────────────────────────────────────────────────────────────────────

const firstFrame = async () => {
  if (!existsSync(bundle)) throw new Error(`No bundle at ${bundle}: build it with \`npx nx run @lathe/cli:bundle\`.`)
  const server = await startScriptedServer(() => ({ steps: [{ text: "hello" }] }))
  const dir = mkdtempSync(join(tmpdir(), "lathe-bench-tui-"))
  const project = join(dir, "project")
  mkdirSync(project)
  execFileSync("git", ["init", "-q"], { cwd: project })
  writeFileSync(join(project, "README.md"), "# demo\n")
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: join(dir, "home"),
    LATHE_DATA_DIR: join(dir, "data"),
    XDG_CONFIG_HOME: join(dir, "config"),
    XDG_DATA_HOME: join(dir, "xdg-data"),
    LATHE_BASE_URL: server.url,
    LATHE_MODEL: "test-model"
  }
  const spawn = (args: ReadonlyArray<string>) =>
    spawnTerminal({ command: process.execPath, args, cwd: project, env, cols: COLS, rows: ROWS })
  const toExit = async (args: ReadonlyArray<string>) => {
    const start = performance.now()
    const code = await spawn(args).exited
    if (code !== 0) throw new Error(`node ${args.join(" ")} exited with ${code}`)
    return performance.now() - start
  }
  /** Spawn → the first frame on screen (the "starting" frame), and spawn → the footer saying "ready". */
  const toFooter = async () => {
    const start = performance.now()
    const term = spawn([bundle])
    await term.waitFor(/starting Lathe|\bready\s*$/m, 20_000)
    const first = performance.now() - start
    await term.waitFor(/\bready\s*$/m, 20_000)
    const ready = performance.now() - start
    term.kill()
    await term.exited
    return { first, ready }
  }
  const runs = {
    node: [] as Array<number>,
    version: [] as Array<number>,
    frame: [] as Array<number>,
    ready: [] as Array<number>
  }
  // One warm-up round (the compile cache, the page cache), then 7 interleaved rounds.
  for (let round = 0; round < 8; round++) {
    const node = await toExit(["-e", "0"])
    const version = await toExit([bundle, "--version"])
    const frame = await toFooter()
    if (round === 0) continue
    runs.node.push(node)
    runs.version.push(version)
    runs.frame.push(frame.first)
    runs.ready.push(frame.ready)
  }
  await server.close()
  rmSync(dir, { recursive: true, force: true })
  const node = median(runs.node)
  const row = (name: string, xs: ReadonlyArray<number>) =>
    out(
      `  ${name.padEnd(40)} ${median(xs).toFixed(0).padStart(5)} ms  ${(median(xs) / node).toFixed(2).padStart(5)}×` +
        `   (${xs.map((x) => x.toFixed(0)).join(" ")})`
    )
  out(`1. First frame, ${COLS}×${ROWS} pty, median of 7 (ratio to node -e 0; all runs)`)
  row("node -e 0 → exit (baseline)", runs.node)
  row("node lathe.js --version → exit", runs.version)
  row("node lathe.js → first frame", runs.frame)
  row('node lathe.js → footer "ready"', runs.ready)
  return median(runs.frame)
}

// ── transcripts of n messages, from the recorded session ──────────────────────────────────────────────────────────

const recorded: ReadonlyArray<string> = readFileSync(fixture, "utf8")
  .split("\n")
  .filter((line) => line.startsWith("{"))
const rootID = (JSON.parse(recorded[0] ?? "{}") as { session?: { id?: string } }).session?.id ?? ""

/** The recorded session's events with every id but the root session's made unique to `copy` (order kept). */
const replica = (copy: number): Array<LatheEvent> => {
  const tag = copy.toString(36).padStart(4, "0")
  return recorded.map(
    (line) =>
      JSON.parse(
        line.replace(/"((?:ses|msg|prt)_[0-9a-z]+|call_[0-9_]+)"/g, (whole, id: string) =>
          id === rootID ? whole : `"${id.replace("_", `_${tag}`)}"`
        )
      ) as LatheEvent
  )
}

/** A transcript of exactly `count` root messages: whole recorded turns replayed, the last one cut at a message. */
const transcriptOf = (count: number): Transcript => {
  const transcript = new Transcript(rootID)
  const have = () => transcript.timeline.length
  for (let copy = 0; have() < count; copy++)
    for (const event of replica(copy)) {
      const adds =
        event.type === "message.updated" &&
        event.message.sessionID === rootID &&
        transcript.message(event.message.id) === undefined
      if (!adds || have() < count) transcript.apply(event)
    }
  return transcript
}

/** A 2,000-delta answer (about 4 characters each, as model tokens): prose, a list, a quote, code and a table. */
const answerDeltas = (): Array<string> => {
  const section = (n: number) =>
    `## Step ${n}: make the parser lazy\n\nThe **parser** reads the *whole* file before it emits anything, which ` +
    "is why `parse()` is slow on large inputs; see [the notes](https://example.com/design) for context.\n\n" +
    "1. Read the tokens lazily with a generator\n2. Keep the buffer bounded\n   - flush at 64 KiB\n\n" +
    "> The tokenizer must not allocate per character.\n\n```ts\nexport function* tokens(input: string) {\n" +
    '  for (let i = 0; i < input.length; i++) if (input[i] === "\\n") yield i\n}\n```\n\n' +
    "| file | lines |\n|:-----|------:|\n| parser.ts | 120 |\n\n"
  let text = ""
  for (let n = 1; text.length < DELTAS * 4; n++) text += section(n)
  return Array.from({ length: DELTAS }, (_, i) => text.slice(i * 4, (i + 1) * 4))
}

// ── 2. frames: the App's layout through Ink to a fake terminal ───────────────────────────────────────────────────

/** A writable the size of the terminal that swallows output, as a TTY would take it. */
class FakeTerminal extends EventEmitter {
  readonly columns = COLS
  readonly rows = ROWS
  readonly isTTY = true
  write(_chunk: string | Uint8Array, ...rest: ReadonlyArray<unknown>): boolean {
    const callback = rest.find((arg) => typeof arg === "function") as (() => void) | undefined
    callback?.()
    return true
  }
}

const style = createStyle(true)

/** What App draws for a transcript with an empty editor: the transcript pane above the editor and the footer. */
const Screen = ({ transcript, view }: { readonly transcript: Transcript; readonly view: TranscriptView }) => {
  const { cost, context } = transcript.totals()
  const bottom = [
    ...editorPanel(emptyEditor, COLS, style, { placeholder: "Ask Lathe to do something", maxRows: 8 }),
    footerLine(
      {
        agent: "build",
        model: "env/test-model",
        contextUsed: context,
        contextLimit: 200_000,
        cost,
        ...statusOf(transcript, false, Date.now())
      },
      COLS,
      style
    )
  ]
  const height = ROWS - bottom.length
  return createElement(
    Box,
    { flexDirection: "column", width: COLS, height: ROWS },
    createElement(TranscriptPane, {
      transcript,
      view,
      style,
      width: COLS,
      height,
      scroll: 0,
      expandReasoning: false,
      frame: 0
    }),
    createElement(Lines, { lines: bottom })
  )
}

/** Mounts the screen for `transcript`; `frame()` draws it again and says whether Ink rendered synchronously. */
const mount = (transcript: Transcript) => {
  const view = new TranscriptView()
  const terminal = new FakeTerminal()
  let renders = 0
  const element = () => createElement(Screen, { transcript, view })
  // maxFps 1000 and a pause between frames: Ink's throttle then renders every frame on its leading edge.
  const instance = render(element(), {
    stdout: terminal as unknown as NodeJS.WriteStream,
    stdin: new PassThrough(),
    stderr: terminal as unknown as NodeJS.WriteStream,
    exitOnCtrlC: false,
    patchConsole: false,
    interactive: true,
    maxFps: 1000,
    onRender: () => {
      renders++
    }
  })
  return {
    frame: () => {
      const before = renders
      instance.rerender(element())
      return renders > before
    },
    unmount: () => instance.unmount()
  }
}

const heap = async () => {
  await sleep(20)
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

/** Each frame's wall and CPU time (sorted apart) and the frames Ink did not draw at once. */
interface StreamResult {
  readonly wall: Float64Array
  readonly cpu: Float64Array
  /** Frames over 16 ms of wall time whose CPU time was under 16 ms (the process was descheduled or waited). */
  readonly descheduled: number
  readonly deferred: number
}

const assistant = recorded
  .map((line) => JSON.parse(line) as LatheEvent)
  .find((event) => event.type === "message.updated" && event.message.role === "assistant")

/** Adds a new assistant message with an empty text part at the end; returns how to stream a delta into it. */
const openAnswer = (transcript: Transcript) => {
  if (assistant?.type !== "message.updated") throw new Error("The fixture has no assistant message.")
  const messageID = "msg_zzzz_streaming"
  const partID = "prt_zzzz_streaming"
  transcript.apply({ ...assistant, message: { ...assistant.message, id: messageID } })
  transcript.apply({ type: "part.updated", part: { id: partID, sessionID: rootID, messageID, type: "text", text: "" } })
  return (delta: string) =>
    transcript.apply({ type: "part.delta", sessionID: rootID, messageID, partID, field: "text", delta })
}

/** Streams `deltas` into a new answer on a `count`-message transcript, timing apply + full frame for each. */
const stream = async (count: number, deltas: ReadonlyArray<string>): Promise<StreamResult> => {
  const transcript = transcriptOf(count)
  const screen = mount(transcript)
  const send = openAnswer(transcript)
  screen.frame()
  const wall = new Float64Array(deltas.length)
  const cpu = new Float64Array(deltas.length)
  let deferred = 0
  let descheduled = 0
  for (let i = 0; i < deltas.length; i++) {
    await sleep(2)
    const cpuStart = process.cpuUsage()
    const start = performance.now()
    send(deltas[i] ?? "")
    if (!screen.frame()) deferred++
    wall[i] = performance.now() - start
    const used = process.cpuUsage(cpuStart)
    cpu[i] = (used.user + used.system) / 1000
    if ((wall[i] ?? 0) > 16 && (cpu[i] ?? 0) <= 16) descheduled++
  }
  screen.unmount()
  return { wall: wall.sort(), cpu: cpu.sort(), descheduled, deferred }
}

const frames = async () => {
  const deltas = answerDeltas()
  // Warm the JIT (React, Yoga, Ink, the markdown renderer) so neither measured run pays for it alone.
  await stream(10, deltas.slice(0, 400))
  const small = await stream(10, deltas)
  const large = await stream(2_000, deltas)
  out(
    `2. Frame per streamed delta (apply + React + Yoga + Ink diff), ${DELTAS} deltas, ${COLS}×${ROWS}; ratio to 10 messages`
  )
  const head = ["wall p50", "wall p99", "wall max", "CPU max"].map((h) => h.padStart(14)).join(" ")
  out(`  ${"transcript".padEnd(22)} ${head}  >16 ms (descheduled)`)
  const row = (name: string, r: StreamResult, base: StreamResult) => {
    const cell = (sorted: Float64Array, baseSorted: Float64Array, q: number) => {
      const value = quantile(sorted, q) ?? NaN
      return `${ms(value)} ${(value / (quantile(baseSorted, q) ?? NaN)).toFixed(2)}×`.padStart(14)
    }
    const cells = [cell(r.wall, base.wall, 0.5), cell(r.wall, base.wall, 0.99), cell(r.wall, base.wall, 1)]
    cells.push(cell(r.cpu, base.cpu, 1))
    const slow = r.wall.filter((t) => t > 16).length
    out(`  ${name.padEnd(22)} ${cells.join(" ")}  ${String(slow).padStart(6)} (${r.descheduled})`)
    if (r.deferred > 0) out(`  (${r.deferred} frames were not drawn at once: raise the pause between deltas)`)
  }
  row("10 messages (baseline)", small, small)
  row("2,000 messages", large, small)
  return { small, large }
}

// ── 3. memory ─────────────────────────────────────────────────────────────────────────────────────────────────────

const HEAP_CHILD = "LATHE_BENCH_TUI_HEAP"

/**
 * Run in a fresh process per size (nothing of another size lingers): heapUsed after GC with a `count`-message
 * transcript, then with its tail rendered, both above the same process with no transcript; prints them as JSON.
 */
const heapChild = async (count: number) => {
  // Render this size once first, so the measured mount runs warm code (the JIT's output is heap too).
  const warm = mount(transcriptOf(count))
  warm.frame()
  warm.unmount()
  const base = await heap()
  const transcript = transcriptOf(count)
  const data = (await heap()) - base
  const screen = mount(transcript)
  screen.frame()
  const total = (await heap()) - base
  screen.unmount()
  process.stdout.write(`${JSON.stringify({ data, total })}\n`)
}

const memory = async () => {
  const measure = (count: number) => {
    const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
      env: { ...process.env, [HEAP_CHILD]: String(count) },
      encoding: "utf8"
    })
    const line = child.stdout.split("\n").find((l) => l.startsWith("{"))
    if (!line) throw new Error(`The heap measurement of ${count} messages failed:\n${child.stderr}`)
    return JSON.parse(line) as { data: number; total: number }
  }
  out("3. Memory: heapUsed after GC above the same process with no transcript (a fresh process per size)")
  out(`  ${"messages".padEnd(10)} ${"transcript".padStart(11)} ${"renderer".padStart(10)} ${"total".padStart(10)}`)
  const rows = [500, 1_000, 2_000].map((count) => ({ count, ...measure(count) }))
  for (const { count, data, total } of rows)
    out(`  ${String(count).padEnd(10)}  ${[data, total - data, total].map((b) => kib(b).padStart(10)).join(" ")}`)
  const [first, , last] = rows
  if (first && last) {
    const per = (bytes: number) => `${(bytes / (last.count - first.count) / 1024).toFixed(2)} KiB`
    out(
      `  per message (500 → 2,000): ${per(last.total - first.total)} in all: ${per(last.data - first.data)} ` +
        `transcript, ${per(last.total - last.data - (first.total - first.data))} renderer`
    )
  }
}

/**
 * Heap growth across DELTAS deltas on a 2,000-message transcript, sampled (after GC) every 250 deltas. What grows is
 * the answer itself (its text and its cached rendered lines); redrawing the same answer thousands of times does not.
 */
const deltaGrowth = async () => {
  const deltas = answerDeltas()
  const transcript = transcriptOf(2_000)
  const screen = mount(transcript)
  const send = openAnswer(transcript)
  screen.frame()
  const heaps = [await heap()]
  const every = deltas.length / 8
  for (let i = 0; i < deltas.length; i++) {
    await sleep(2)
    send(deltas[i] ?? "")
    screen.frame()
    if ((i + 1) % every === 0) heaps.push(await heap())
  }
  screen.unmount()
  // Least-squares slope over the samples after the first (the JIT settles during the first 250 deltas).
  const points = heaps.slice(1).map((h, i) => ({ x: (i + 1) * every, y: h }))
  const mx = points.reduce((a, p) => a + p.x, 0) / points.length
  const my = points.reduce((a, p) => a + p.y, 0) / points.length
  const slope =
    points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0) / points.reduce((a, p) => a + (p.x - mx) ** 2, 0)
  const h0 = heaps[0] ?? 0
  out(
    `  ${DELTAS} deltas on 2,000 messages, heap every ${every}: ${heaps.map((h) => kib(h - h0).replace(" KiB", "")).join(" ")} KiB; ` +
      `slope ${(slope / 1024).toFixed(3)} KiB per delta`
  )
}

if (process.env[HEAP_CHILD]) {
  await heapChild(Number(process.env[HEAP_CHILD]))
  process.exit(0)
}

const frameMs = await firstFrame()
out()
const { large } = await frames()
out()
await memory()
await deltaGrowth()
out()
const max = quantile(large.wall, 1) ?? NaN
out(
  `targets: first frame ≤ 300 ms: ${frameMs.toFixed(0)} ms ${frameMs <= 300 ? "✓" : "✗"}; ` +
    `max frame ≤ 16 ms on 2,000 messages: ${ms(max)} ${max <= 16 ? "✓" : "✗"}` +
    (max > 16 && (quantile(large.cpu, 1) ?? NaN) <= 16 ? " (its CPU time was under 16 ms: descheduled)" : "")
)
process.exit(0)
