/** One file as the session last read (or wrote) it: enough to tell whether it changed on disk since. */
export interface FileStamp {
  readonly mtimeMs: number
  readonly size: number
}

/** A todo item of the session's list, as `todowrite` stores it and the CLI shows it. */
export interface TodoItem {
  readonly content: string
  readonly status: "pending" | "in_progress" | "completed" | "cancelled"
  readonly priority: "high" | "medium" | "low"
}

/**
 * Per-session state of the built-in tools: which files were read (and their stamp then), and the todo list.
 * Everything is keyed by session id, so two sessions never see each other's reads or todos. One instance
 * lives in each loaded plugin's setup closure.
 */
export class ToolState {
  private readonly reads = new Map<string, Map<string, FileStamp>>()
  private readonly todos = new Map<string, ReadonlyArray<TodoItem>>()

  /** Remembers that `sessionID` saw `path` (absolute) as `stamp`. */
  recordRead(sessionID: string, path: string, stamp: FileStamp): void {
    let files = this.reads.get(sessionID)
    if (!files) {
      files = new Map()
      this.reads.set(sessionID, files)
    }
    files.set(path, { mtimeMs: stamp.mtimeMs, size: stamp.size })
  }

  /** The stamp `path` had when `sessionID` last read or wrote it, if ever. */
  lastRead(sessionID: string, path: string): FileStamp | undefined {
    return this.reads.get(sessionID)?.get(path)
  }

  /** The session's todo list (empty when never written). */
  getTodos(sessionID: string): ReadonlyArray<TodoItem> {
    return this.todos.get(sessionID) ?? []
  }

  /** Replaces the session's todo list. */
  setTodos(sessionID: string, todos: ReadonlyArray<TodoItem>): void {
    this.todos.set(sessionID, [...todos])
  }
}
