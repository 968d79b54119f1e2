import type { PatchPart, SubtaskPart } from "@lathe/plugin/schema"

/** `+3 −1`: lines added and removed (a side with nothing is left out; a change of mode only reads `±0`). */
const counts = (additions: number, deletions: number): string =>
  [additions > 0 ? `+${additions}` : "", deletions > 0 ? `−${deletions}` : ""].filter(Boolean).join(" ") || "±0"

/**
 * A step's patch in one line: `± 2 files changed (+5 −1): a.ts +3 −1, b.ts +2`, each file named by `name` (a
 * Markdown export puts it in backticks). A part stored before step summaries existed lists its files only.
 */
export const patchLine = (part: PatchPart, name: (file: string) => string = (file) => file): string => {
  const head = `± ${part.files.length} file${part.files.length === 1 ? "" : "s"} changed`
  const { summary } = part
  if (summary === undefined) return `${head}: ${part.files.map(name).join(", ")}`
  const files = summary.files.map((f) => `${name(f.file)} ${counts(f.additions, f.deletions)}`)
  return `${head} (${counts(summary.additions, summary.deletions)}): ${files.join(", ")}`
}

/** How a subtask stands, for a transcript line: ` (running)`, ` (completed)`, ` (error)`; nothing on older parts. */
export const subtaskStatus = (part: SubtaskPart): string => (part.status === undefined ? "" : ` (${part.status})`)
