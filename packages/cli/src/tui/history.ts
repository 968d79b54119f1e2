import { appendFile, mkdir, readFile, rename, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"

/** How many prompts a project's history keeps. */
export const HISTORY_LIMIT = 1_000

// The file may grow to twice the limit through appends before a load rewrites it with the last HISTORY_LIMIT.
const COMPACT_AT = HISTORY_LIMIT * 2

const SAFE_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/

/** Parses one history line; a corrupt line (not a JSON string) yields undefined and is skipped. */
const parseLine = (line: string): string | undefined => {
  if (line.trim() === "") return undefined
  try {
    const value: unknown = JSON.parse(line)
    return typeof value === "string" ? value : undefined
  } catch {
    return undefined
  }
}

/**
 * The prompts a person sent in one project, newest last, persisted one JSON string per line in
 * `<dataDir>/history/<projectID>.jsonl`. Keeps the last 1,000; a prompt equal to the newest entry, or blank, is not
 * added; a corrupt line is skipped, never fatal; writes are appends, so several `lathe` processes can share the file.
 *
 * Navigation is in-memory: `previous(draft)` walks to older entries (remembering the draft on the first step),
 * `next()` back to newer ones and finally to the draft.
 */
export class PromptHistory {
  private items: Array<string>
  /** The entry shown while navigating; `items.length` means "the draft, not navigating". */
  private position: number
  private draft = ""
  /** The appends in flight, in order: each waits for the one before, so the file keeps the order prompts were sent. */
  private writes: Promise<void> = Promise.resolve()

  private constructor(
    private readonly file: string,
    items: Array<string>
  ) {
    this.items = items
    this.position = items.length
  }

  /** Reads a project's history; a missing file is an empty history. Rejects only on an unusable `projectID` or an
   * unreadable (not missing) file. */
  static async load(dataDir: string, projectID: string): Promise<PromptHistory> {
    if (!SAFE_ID.test(projectID)) {
      throw new Error(
        `Cannot keep prompt history for project id ${JSON.stringify(projectID)}: it must be a plain file name ` +
          "(letters, digits, '.', '_' and '-', not starting with '.')."
      )
    }
    const file = join(dataDir, "history", `${projectID}.jsonl`)
    const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return ""
      throw error
    })
    const all = text.split("\n").flatMap((line) => parseLine(line) ?? [])
    const history = new PromptHistory(file, all.slice(-HISTORY_LIMIT))
    if (all.length > COMPACT_AT) await history.compact()
    return history
  }

  /** The prompts, oldest first. */
  get entries(): ReadonlyArray<string> {
    return this.items
  }

  /**
   * Records a sent prompt (unless blank or equal to the newest entry) and ends any navigation. The entry is in memory
   * at once; the promise settles when it is on disk (after every earlier one), and rejects if that write failed.
   */
  add(prompt: string): Promise<void> {
    this.reset()
    if (prompt.trim() === "" || this.items[this.items.length - 1] === prompt) return Promise.resolve()
    this.items = [...this.items, prompt].slice(-HISTORY_LIMIT)
    this.position = this.items.length
    const write = this.writes.then(async () => {
      await mkdir(dirname(this.file), { recursive: true })
      await appendFile(this.file, `${JSON.stringify(prompt)}\n`, "utf8")
    })
    this.writes = write.catch(() => undefined)
    return write
  }

  /** Settles when every prompt added so far is on disk (or its write failed). */
  written(): Promise<void> {
    return this.writes
  }

  /** The entry older than the one shown, or undefined at the oldest. The first step remembers `draft`. */
  previous(draft: string): string | undefined {
    if (this.position === 0) return undefined
    if (this.position === this.items.length) this.draft = draft
    this.position -= 1
    return this.items[this.position]
  }

  /** The entry newer than the one shown, then the remembered draft, then undefined. */
  next(): string | undefined {
    if (this.position >= this.items.length) return undefined
    this.position += 1
    return this.position === this.items.length ? this.draft : this.items[this.position]
  }

  /** Ends navigation (after a submit): the next `previous` starts from the newest entry again. */
  reset(): void {
    this.position = this.items.length
    this.draft = ""
  }

  /** Rewrites the file with the kept entries, atomically (write a sibling, then rename over). */
  private async compact(): Promise<void> {
    const temporary = `${this.file}.${process.pid}.tmp`
    await writeFile(temporary, this.items.map((item) => `${JSON.stringify(item)}\n`).join(""), "utf8")
    await rename(temporary, this.file)
  }
}
