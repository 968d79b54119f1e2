import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// Two clones and a worktree of one repository share a project id (its first commit), but each work tree keeps its
// own sessions: listed, continued, undone and redone only where they ran (the newcomer's two-clone story).
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd, encoding: "utf8" })

/** Every file of a work tree (its .git too) with its exact bytes. */
const bytesOf = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name)
      if (entry.isDirectory()) walk(path)
      else out[relative(dir, path)] = readFileSync(path).toString("base64")
    }
  }
  walk(dir)
  return out
}

const BUG = "export const underline = init(4, 22)\n"
const FIX = "export const underline = init(4, 24)\n"

/** Repository a (the box's project) with the bug committed, a clone b and a worktree c; a scripted model. */
const setup = async (replies: Parameters<typeof startScriptedServer>[0]) => {
  server = await startScriptedServer(replies)
  const box = sandbox()
  const a = realpathSync(box.project)
  writeFileSync(join(a, "index.mjs"), BUG)
  git(a, "init", "-q", "-b", "main")
  git(a, "add", "-A")
  git(a, "commit", "-q", "-m", "the bug")
  const b = join(realpathSync(box.dir), "clone")
  git(box.dir, "clone", "-q", a, b)
  const c = join(realpathSync(box.dir), "worktree")
  git(a, "worktree", "add", "-q", "-b", "side", c)
  const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
  const lathe = (cwd: string, ...args: Array<string>) => runLathe(args, { cwd, env })
  const sessionsIn = async (cwd: string, ...flags: Array<string>) => {
    const listed = await lathe(cwd, "session", "list", "--json", ...flags)
    assert.strictEqual(listed.code, 0, listed.stderr)
    return JSON.parse(listed.stdout) as Array<{ id: string; tree?: string; directory: string }>
  }
  return { box, a, b, c, env, lathe, sessionsIn }
}

const fixTurn = [
  { steps: [{ tool: "edit", input: { filePath: "index.mjs", oldString: "init(4, 22)", newString: "init(4, 24)" } }] },
  { steps: [{ text: "Fixed the underline code." }] }
]

describe("sessions per work tree", () => {
  it("a clone and a worktree neither list, continue nor undo the first checkout's session; undo there still works", async () => {
    const { a, b, c, lathe, sessionsIn } = await setup([...fixTurn, { steps: [{ text: "Hello from the clone." }] }])
    const fixed = await lathe(a, "run", "--yes", "fix the failing test")
    assert.strictEqual(fixed.code, 0, fixed.stderr)
    assert.strictEqual(readFileSync(join(a, "index.mjs"), "utf8"), FIX)
    const [ofA] = await sessionsIn(a)
    assert.isDefined(ofA)
    assert.strictEqual(ofA?.tree, a)

    // The clone and the worktree list nothing of a's; --all-trees lists it, naming a's tree.
    assert.deepStrictEqual(await sessionsIn(b), [])
    assert.deepStrictEqual(await sessionsIn(c), [])
    const plain = await lathe(b, "session", "list")
    assert.strictEqual(plain.code, 0)
    assert.strictEqual(plain.stdout, "")
    assert.include(plain.stderr, `This work tree (${b}) has no session yet`)
    assert.include(plain.stderr, "--all-trees")
    const every = await lathe(b, "session", "list", "--all-trees")
    assert.strictEqual(every.code, 0, every.stderr)
    assert.match(every.stdout, new RegExp(`^${ofA?.id} {2}.+ {2}${a} {2}fix the failing test\\n$`))

    // Undo asked from the clone or the worktree refuses, names where the session ran, and writes nothing.
    const before = { b: bytesOf(b), c: bytesOf(c) }
    for (const [tree, verb] of [
      [b, "undo"],
      [c, "undo"],
      [b, "redo"]
    ] as const) {
      const refused = await lathe(tree, verb, "--session", ofA?.id ?? "")
      assert.strictEqual(refused.code, 1, refused.stdout)
      assert.include(refused.stderr, `This session (${ofA?.id}) ran in ${a}, another work tree than this one (${tree})`)
      assert.include(refused.stderr, `Run \`lathe ${verb} --session ${ofA?.id}\` in ${a}`)
    }
    assert.deepStrictEqual(bytesOf(b), before.b, "the clone is byte for byte as it was")
    assert.deepStrictEqual(bytesOf(c), before.c, "the worktree is byte for byte as it was")
    // A plain undo in the clone finds no session of its own.
    const none = await lathe(b, "undo")
    assert.strictEqual(none.code, 1)
    assert.include(none.stderr, "no session yet")

    // --session with a's id refuses to continue it here; -c starts the clone's own session.
    const foreign = await lathe(b, "run", "--session", ofA?.id ?? "", "go on")
    assert.strictEqual(foreign.code, 1)
    assert.include(foreign.stderr, `Session ${ofA?.id} ran in ${a}, another work tree than this one (${b})`)
    const continued = await lathe(b, "run", "-c", "--format", "json", "say hello")
    assert.strictEqual(continued.code, 0, continued.stderr)
    const ofB = await sessionsIn(b)
    assert.lengthOf(ofB, 1)
    assert.notStrictEqual(ofB[0]?.id, ofA?.id, "-c in the clone does not continue a's session")
    assert.strictEqual(ofB[0]?.tree, b)
    assert.deepStrictEqual(
      (await sessionsIn(a)).map((s) => s.id),
      [ofA?.id],
      "a still lists only its own"
    )
    assert.strictEqual(readFileSync(join(b, "index.mjs"), "utf8"), BUG, "the clone's file was never touched")

    // In a, undo puts the bug back; the clone and the worktree stay as they were.
    const undone = await lathe(a, "undo")
    assert.strictEqual(undone.code, 0, undone.stderr)
    assert.strictEqual(readFileSync(join(a, "index.mjs"), "utf8"), BUG)
    assert.deepStrictEqual(bytesOf(c), before.c)
    const redone = await lathe(a, "redo")
    assert.strictEqual(redone.code, 0, redone.stderr)
    assert.strictEqual(readFileSync(join(a, "index.mjs"), "utf8"), FIX)
  }, 120_000)

  it("a session stored before sessions recorded their tree still undoes in its tree, and not from a clone", async () => {
    const { box, a, b, lathe } = await setup(fixTurn)
    const fixed = await lathe(a, "run", "--yes", "fix the failing test")
    assert.strictEqual(fixed.code, 0, fixed.stderr)
    // Turn the data dir back into what the previous Lathe left: the first schema, sessions without a tree, and the
    // project's one shadow repository at snapshot/<projectID>.
    const db = new DatabaseSync(join(box.env.LATHE_DATA_DIR ?? "", "lathe.db"))
    db.exec(`DROP INDEX session_tree;
      ALTER TABLE session DROP COLUMN tree;
      ALTER TABLE session DROP COLUMN directory;
      UPDATE session SET data = json_remove(data, '$.tree');
      PRAGMA user_version = 1;`)
    const [row] = db.prepare("SELECT id, project_id FROM session").all()
    db.close()
    const shadows = join(box.env.LATHE_DATA_DIR ?? "", "snapshot")
    const keyed = readdirSync(shadows).find((name) => name.startsWith(`${row?.project_id}.`) && !name.endsWith(".lock"))
    assert.isDefined(keyed)
    renameSync(join(shadows, keyed ?? ""), join(shadows, String(row?.project_id)))

    const before = bytesOf(b)
    const refused = await lathe(b, "undo", "--session", String(row?.id))
    assert.strictEqual(refused.code, 1)
    assert.include(refused.stderr, `ran in ${a}, another work tree than this one (${b})`)
    assert.deepStrictEqual(bytesOf(b), before)

    const listed = await lathe(a, "session", "list")
    assert.include(listed.stdout, String(row?.id), "listed in its tree by its stored directory")
    const undone = await lathe(a, "undo")
    assert.strictEqual(undone.code, 0, undone.stderr)
    assert.include(undone.stdout + undone.stderr, "index.mjs")
    assert.strictEqual(readFileSync(join(a, "index.mjs"), "utf8"), BUG)
  }, 120_000)
})
