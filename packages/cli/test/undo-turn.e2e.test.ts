import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { createLatheClient, LatheApiError } from "@lathe/sdk"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { type ServeProcess, startServe } from "./serve-helpers.js"

// Undo by turn and redo through the real CLI, the real snapshot layer (a shadow git repository) and real tools.
let server: ScriptedServer | undefined
let serve: ServeProcess | undefined
afterEach(async () => {
  serve?.child.kill("SIGKILL")
  serve = undefined
  await server?.close()
  server = undefined
})

/** Turn 1 writes first.txt; turn 2 has three changing steps: write new.txt, edit keep.txt, delete gone.txt. */
const twoTurns = () => [
  { steps: [{ tool: "write", input: { filePath: "first.txt", content: "first\n" } }] },
  { steps: [{ text: "Wrote first." }] },
  { steps: [{ tool: "write", input: { filePath: "new.txt", content: "new\n" } }] },
  { steps: [{ tool: "edit", input: { filePath: "keep.txt", oldString: "keep v1", newString: "keep v2" } }] },
  { steps: [{ tool: "bash", input: { command: "rm gone.txt", description: "delete gone.txt" } }] },
  { steps: [{ text: "Reworked." }] }
]

const setup = async (replies: Parameters<typeof startScriptedServer>[0]) => {
  server = await startScriptedServer(replies)
  const box = sandbox()
  writeFileSync(join(box.project, "keep.txt"), "keep v1\n")
  writeFileSync(join(box.project, "gone.txt"), "gone\n")
  const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
  const at = (file: string) => join(box.project, file)
  const read = (file: string) => (existsSync(at(file)) ? readFileSync(at(file), "utf8") : undefined)
  const lathe = (...args: Array<string>) => runLathe(args, { cwd: box.project, env })
  return { box, env, at, read, lathe }
}

describe("lathe undo by turn", () => {
  it("one undo takes back a three-step turn (write, edit, delete), one redo brings it back; a hand edit is named, not overwritten", async () => {
    const { box, at, read, lathe } = await setup([...twoTurns(), { steps: [{ text: "Again." }] }])
    assert.strictEqual((await lathe("run", "--yes", "write the first file")).code, 0)
    const run = await lathe("run", "--format", "json", "--yes", "-c", "rework the files")
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(read("new.txt"), "new\n")
    assert.strictEqual(read("keep.txt"), "keep v2\n")
    assert.isUndefined(read("gone.txt"))

    // step-finish.snapshot is the tree after its step: the shadow repository holds the step's result under it.
    const parts = run.events.flatMap((e) => (e.type === "part.updated" ? [e.part] : []))
    const patches = parts.filter((p) => p.type === "patch")
    const finishes = parts.filter((p) => p.type === "step-finish" && p.snapshot !== undefined)
    assert.lengthOf(patches, 3)
    const writeFinish = finishes.find((p) => p.messageID === patches[0]?.messageID)
    assert.isDefined(writeFinish?.type === "step-finish" ? writeFinish.snapshot : undefined)
    assert.notStrictEqual(
      writeFinish?.type === "step-finish" ? writeFinish.snapshot : "",
      patches[0]?.type === "patch" ? patches[0].hash : ""
    )
    const shadowRoot = join(box.env.LATHE_DATA_DIR ?? "", "snapshot")
    const [shadow] = readdirSync(shadowRoot)
    const show = (tree: string, file: string) =>
      execFileSync("git", [`--git-dir=${join(shadowRoot, shadow ?? "")}`, "show", `${tree}:${file}`], {
        encoding: "utf8"
      })
    assert.strictEqual(
      show(writeFinish?.type === "step-finish" ? (writeFinish.snapshot ?? "") : "", "new.txt"),
      "new\n"
    )

    const list = await lathe("undo", "--list")
    assert.strictEqual(list.code, 0, list.stderr)
    assert.match(list.stdout, /1 .*"write the first file" {2}1 file: first\.txt/)
    assert.match(list.stdout, /2 .*"rework the files" {2}3 files: gone\.txt, keep\.txt, new\.txt/)

    // A hand edit after the turn: the undo stops (no terminal to ask), names the file and says how to force.
    writeFileSync(at("keep.txt"), "keep v2, edited by hand\n")
    const refused = await lathe("undo")
    assert.strictEqual(refused.code, 1)
    assert.include(refused.stderr, "keep.txt")
    assert.include(refused.stderr, "lathe undo --force")
    assert.strictEqual(read("keep.txt"), "keep v2, edited by hand\n", "the hand edit is not overwritten")
    assert.strictEqual(read("new.txt"), "new\n", "nothing else was undone either")
    assert.isUndefined(read("gone.txt"))

    // Forced: the whole turn goes in one undo (turn 1's file stays), and the overwrite is said.
    const undo = await lathe("undo", "--force")
    assert.strictEqual(undo.code, 0, undo.stderr)
    assert.include(undo.stdout, "Restored 3 files")
    assert.include(undo.stdout, "Overwrote changes made since to keep.txt")
    assert.strictEqual(read("keep.txt"), "keep v1\n")
    assert.isUndefined(read("new.txt"))
    assert.strictEqual(read("gone.txt"), "gone\n")
    assert.strictEqual(read("first.txt"), "first\n")
    assert.include((await lathe("undo", "--list")).stdout, "(undone)")

    // One redo brings the turn back, the hand edit included.
    const redo = await lathe("redo")
    assert.strictEqual(redo.code, 0, redo.stderr)
    assert.include(redo.stdout, "Re-applied 3 files")
    assert.strictEqual(read("keep.txt"), "keep v2, edited by hand\n")
    assert.strictEqual(read("new.txt"), "new\n")
    assert.isUndefined(read("gone.txt"))
  }, 180_000)

  it("a hand edit after the undo stops the redo; an undone turn leaves the model's history; undo <n> and --step", async () => {
    const { read, at, lathe } = await setup([...twoTurns(), { steps: [{ text: "Starting again." }] }])
    assert.strictEqual((await lathe("run", "--yes", "write the first file")).code, 0)
    assert.strictEqual((await lathe("run", "--yes", "-c", "rework the files")).code, 0)

    assert.strictEqual((await lathe("undo")).code, 0)
    writeFileSync(at("gone.txt"), "gone, kept by hand\n")
    const refused = await lathe("redo")
    assert.strictEqual(refused.code, 1)
    assert.include(refused.stderr, "gone.txt")
    assert.include(refused.stderr, "lathe redo --force")
    assert.strictEqual(read("gone.txt"), "gone, kept by hand\n")
    assert.isUndefined(read("new.txt"), "redo changed nothing")
    writeFileSync(at("gone.txt"), "gone\n")

    // Back to before turn 1: both turns undone, first.txt gone too.
    const back = await lathe("undo", "1")
    assert.strictEqual(back.code, 0, back.stderr)
    assert.deepStrictEqual(back.stdout.trim().split("\n").slice(1), ["  first.txt"])
    assert.isUndefined(read("first.txt"))
    assert.strictEqual((await lathe("redo")).code, 0)
    assert.strictEqual(read("first.txt"), "first\n")
    assert.strictEqual(read("keep.txt"), "keep v2\n")

    // --step keeps the one-step undo: only the delete comes back.
    const step = await lathe("undo", "--step")
    assert.strictEqual(step.code, 0, step.stderr)
    assert.strictEqual(read("gone.txt"), "gone\n")
    assert.strictEqual(read("keep.txt"), "keep v2\n")
    assert.strictEqual((await lathe("redo")).code, 0)

    // The undone turn, prompt included, is not in what the model sees next.
    assert.strictEqual((await lathe("undo")).code, 0)
    const next = await lathe("run", "--format", "json", "-c", "start again")
    assert.strictEqual(next.code, 0, next.stderr)
    const body = JSON.stringify(server?.requests.at(-1)?.body)
    assert.include(body, "write the first file")
    assert.include(body, "start again")
    assert.notInclude(body, "rework the files")
    assert.notInclude(body, "new.txt")
  }, 180_000)

  it("the server's API and the SDK list turns, undo a turn (409 naming a hand-edited file, then force) and redo", async () => {
    const { box, env, at, read, lathe } = await setup(twoTurns())
    assert.strictEqual((await lathe("run", "--yes", "write the first file")).code, 0)
    assert.strictEqual((await lathe("run", "--yes", "-c", "rework the files")).code, 0)
    const token = "undo-turn-token"
    serve = await startServe(["--port", "0"], { cwd: box.project, env: { ...env, LATHE_SERVER_TOKEN: token } })
    const lathe$ = createLatheClient({ baseUrl: serve.url, token })
    const [session] = await lathe$.sessions.list()
    const id = session?.id ?? ""
    const turns = await lathe$.sessions.turns(id)
    assert.deepStrictEqual(
      turns.map((t) => [t.index, t.prompt, t.files.join(","), t.undone]),
      [
        [1, "write the first file", "first.txt", false],
        [2, "rework the files", "gone.txt,keep.txt,new.txt", false]
      ]
    )
    writeFileSync(at("new.txt"), "new, edited by hand\n")
    const refused = await lathe$.sessions.undo(id).catch((error: unknown) => error)
    assert.instanceOf(refused, LatheApiError)
    assert.strictEqual(refused instanceof LatheApiError ? refused.status : 0, 409)
    assert.include(refused instanceof LatheApiError ? refused.message : "", "new.txt")
    assert.strictEqual(read("new.txt"), "new, edited by hand\n")
    const undone = await lathe$.sessions.undo(id, { force: true })
    assert.deepStrictEqual(undone.files, ["gone.txt", "keep.txt", "new.txt"])
    assert.deepStrictEqual(undone.overwritten, ["new.txt"])
    assert.strictEqual(undone.session.revert?.messageID, turns[1]?.messageID)
    assert.isUndefined(read("new.txt"))
    assert.strictEqual(read("keep.txt"), "keep v1\n")
    const redone = await lathe$.sessions.redo(id)
    assert.deepStrictEqual(redone.files, ["gone.txt", "keep.txt", "new.txt"])
    assert.strictEqual(read("new.txt"), "new, edited by hand\n")
    const step = await lathe$.sessions.undo(id, { step: true })
    assert.deepStrictEqual(step.files, ["gone.txt"])
    // The hand edit came back with redo, so going further back names it again.
    const back = await lathe$.sessions.undo(id, { turn: 1, force: true })
    assert.deepStrictEqual(back.files, ["first.txt", "keep.txt", "new.txt"])
    assert.deepStrictEqual(back.overwritten, ["new.txt"])
    assert.isUndefined(read("first.txt"))
  }, 180_000)
})
