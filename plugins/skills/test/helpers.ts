import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import type { PluginLogger } from "@lathe/plugin"
import type { DiscoverOptions } from "../src/index.js"

/** A fresh temp dir (real path, so absolute paths in assertions match what the plugin resolves). */
export const tempDir = (): string => realpathSync(mkdtempSync(join(tmpdir(), "lathe-skills-")))

/** Writes files (paths relative to `root`). */
export const write = (root: string, files: Readonly<Record<string, string>>): void => {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
}

/** The text of a SKILL.md with the given front matter lines and body. */
export const skillText = (frontMatter: ReadonlyArray<string>, body = "Do the thing.\n"): string =>
  ["---", ...frontMatter, "---", body].join("\n")

/** Writes `<dir>/<name>/SKILL.md` (dir relative to `base`) with a valid front matter and `body`. */
export const writeSkill = (
  base: string,
  dir: string,
  name: string,
  description = `The ${name} skill.`,
  body = ""
): void =>
  write(base, { [join(dir, name, "SKILL.md")]: skillText([`name: ${name}`, `description: ${description}`], body) })

/** One line a {@link RecordingLog} received. */
export interface LogLine {
  readonly level: "info" | "warn" | "error"
  readonly message: string
}

/** A plugin logger that keeps what it is told, for assertions. */
export interface RecordingLog extends PluginLogger {
  readonly lines: Array<LogLine>
  /** The messages of one level. */
  readonly at: (level: LogLine["level"]) => ReadonlyArray<string>
}

/** A logger recording every line. */
export const recordingLog = (): RecordingLog => {
  const lines: Array<LogLine> = []
  return {
    lines,
    at: (level) => lines.filter((line) => line.level === level).map((line) => line.message),
    info: (message) => void lines.push({ level: "info", message }),
    warn: (message) => void lines.push({ level: "warn", message }),
    error: (message) => void lines.push({ level: "error", message })
  }
}

/** A project root, a config dir and a home dir, each its own temp dir, plus a recording log. */
export const layout = (trusted = true): DiscoverOptions & { readonly log: RecordingLog } => ({
  root: tempDir(),
  configDir: tempDir(),
  home: tempDir(),
  trusted,
  log: recordingLog()
})
