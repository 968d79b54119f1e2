import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "vitest"
import { HISTORY_LIMIT, PromptHistory } from "../src/tui/history.js"

let dataDir = ""
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "lathe-history-"))
})
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true })
})

const fileOf = (projectID: string): string => join(dataDir, "history", `${projectID}.jsonl`)

describe("PromptHistory persistence", () => {
  it("starts empty, appends one JSON string per line and reads them back per project", async () => {
    const history = await PromptHistory.load(dataDir, "proj")
    assert.deepStrictEqual(history.entries, [])
    await history.add("first")
    await history.add('second\nwith "quotes"')
    assert.strictEqual(await readFile(fileOf("proj"), "utf8"), '"first"\n"second\\nwith \\"quotes\\""\n')
    const again = await PromptHistory.load(dataDir, "proj")
    assert.deepStrictEqual(again.entries, ["first", 'second\nwith "quotes"'])
    assert.deepStrictEqual((await PromptHistory.load(dataDir, "other")).entries, [])
  })

  it("prompts added without waiting are in memory at once and reach the file in the order they were sent", async () => {
    const history = await PromptHistory.load(dataDir, "proj")
    const prompts = Array.from({ length: 40 }, (_, i) => `p${i}`)
    const writes = prompts.map((prompt) => history.add(prompt))
    assert.deepStrictEqual(history.entries, prompts, "in memory before any write finished")
    await history.written()
    assert.strictEqual(await readFile(fileOf("proj"), "utf8"), prompts.map((p) => `"${p}"\n`).join(""))
    await Promise.all(writes)
  })

  it("a failed write rejects its own add only; the next prompts are still written", async () => {
    const history = await PromptHistory.load(dataDir, "proj")
    // A file where the history directory should be: the first write fails.
    await writeFile(join(dataDir, "history"), "in the way")
    const failed = history.add("lost")
    await rm(join(dataDir, "history"))
    const after = history.add("kept")
    await failed.then(
      () => assert.fail("the first write should have failed"),
      () => undefined
    )
    await after
    assert.strictEqual(await readFile(fileOf("proj"), "utf8"), '"kept"\n')
  })

  it("does not add a prompt equal to the newest one, nor a blank one", async () => {
    const history = await PromptHistory.load(dataDir, "proj")
    for (const prompt of ["a", "a", "b", "a", "  ", ""]) await history.add(prompt)
    assert.deepStrictEqual(history.entries, ["a", "b", "a"])
    assert.deepStrictEqual((await PromptHistory.load(dataDir, "proj")).entries, ["a", "b", "a"])
  })

  it("keeps the last 1,000 entries, in memory and after a reload that compacts the file", async () => {
    const lines = Array.from({ length: HISTORY_LIMIT * 2 + 5 }, (_, i) => JSON.stringify(`p${i}`))
    await mkdir(join(dataDir, "history"), { recursive: true })
    await writeFile(fileOf("proj"), `${lines.join("\n")}\n`)
    const history = await PromptHistory.load(dataDir, "proj")
    assert.strictEqual(history.entries.length, HISTORY_LIMIT)
    assert.strictEqual(history.entries[0], `p${HISTORY_LIMIT + 5}`)
    await history.add("newest")
    assert.strictEqual(history.entries.length, HISTORY_LIMIT)
    assert.strictEqual(history.entries[HISTORY_LIMIT - 1], "newest")
    const file = (await readFile(fileOf("proj"), "utf8")).trimEnd().split("\n")
    assert.strictEqual(file.length, HISTORY_LIMIT + 1)
    assert.deepStrictEqual((await PromptHistory.load(dataDir, "proj")).entries, history.entries)
  })

  it("skips corrupt lines instead of failing", async () => {
    await mkdir(join(dataDir, "history"), { recursive: true })
    await writeFile(fileOf("proj"), '"good"\n{not json\n42\n\n"also good"\n"truncated')
    assert.deepStrictEqual((await PromptHistory.load(dataDir, "proj")).entries, ["good", "also good"])
  })

  it("refuses a project id that is not a plain file name", async () => {
    for (const id of ["../escape", "a/b", "", ".hidden"]) {
      const error = await PromptHistory.load(dataDir, id).then(
        () => undefined,
        (e: unknown) => e
      )
      assert.instanceOf(error, Error)
      assert.match((error as Error).message, /plain file name/)
    }
  })
})

describe("PromptHistory navigation", () => {
  const withEntries = async (...prompts: Array<string>): Promise<PromptHistory> => {
    const history = await PromptHistory.load(dataDir, "nav")
    for (const prompt of prompts) await history.add(prompt)
    return history
  }

  it("walks older with previous, newer with next, and returns the draft last", async () => {
    const history = await withEntries("one", "two", "three")
    assert.strictEqual(history.previous("my draft"), "three")
    assert.strictEqual(history.previous("ignored: only the first call remembers"), "two")
    assert.strictEqual(history.previous(""), "one")
    assert.strictEqual(history.previous(""), undefined)
    assert.strictEqual(history.next(), "two")
    assert.strictEqual(history.next(), "three")
    assert.strictEqual(history.next(), "my draft")
    assert.strictEqual(history.next(), undefined)
  })

  it("starts again from the newest entry after reset and after add", async () => {
    const history = await withEntries("one", "two")
    history.previous("")
    history.previous("")
    history.reset()
    assert.strictEqual(history.previous("d"), "two")
    await history.add("three")
    assert.strictEqual(history.previous("d"), "three")
  })

  it("has nothing to walk in an empty history", async () => {
    const history = await withEntries()
    assert.strictEqual(history.previous("draft"), undefined)
    assert.strictEqual(history.next(), undefined)
  })
})
