import type { StepFileChange, StepSummary } from "@lathe/plugin/schema"

/** A step's summary from the line counts of its patch: every file with its counts, and the totals. */
export const stepSummary = (lines: ReadonlyArray<StepFileChange>): StepSummary => {
  let additions = 0
  let deletions = 0
  for (const line of lines) {
    additions += line.additions
    deletions += line.deletions
  }
  return {
    additions,
    deletions,
    files: lines.map((l) => ({ file: l.file, additions: l.additions, deletions: l.deletions }))
  }
}
