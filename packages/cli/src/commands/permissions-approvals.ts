import { Paths } from "@lathe/core"
import { type ApprovalStoreError, forgetApprovals, type ListedApproval, listApprovals } from "@lathe/permission"
import { Effect } from "effect"
import type { CliIO } from "../io.js"

/** The data folder every project's approvals live under. */
const dataDir = (io: CliIO) =>
  Effect.runPromise(
    Effect.gen(function* () {
      return (yield* Paths).data
    }).pipe(Effect.provide(Paths.layer(io.cwd, io.env)))
  )

const when = (entry: ListedApproval): string | null =>
  entry.approval.time === undefined ? null : new Date(entry.approval.time).toISOString()

const project = (entry: ListedApproval): string => entry.approval.project ?? `project id ${entry.projectID}`

const describeApproval = (entry: ListedApproval): string =>
  `${entry.approval.permission} ${JSON.stringify(entry.approval.pattern)} in ${project(entry)}, ` +
  `${when(entry) ?? "time not recorded"}` +
  (entry.applies ? "" : ` (not applied: ${entry.approval.permission} approvals now last for one session)`)

const reportProblems = (problems: ReadonlyArray<ApprovalStoreError>, io: CliIO) => {
  for (const problem of problems) io.stderr(`lathe permissions: ${problem.message}\n`)
}

/** `lathe permissions approvals [--json]`: every approval an "always" reply remembered, numbered for `forget`. */
export const listCommand = async (json: boolean, io: CliIO): Promise<number> => {
  const result = await Effect.runPromise(Effect.result(listApprovals(await dataDir(io))))
  if (result._tag === "Failure") {
    io.stderr(`lathe permissions approvals: ${String(result.failure)}\n`)
    return 1
  }
  const { approvals, problems } = result.success
  reportProblems(problems, io)
  if (json) {
    const rows = approvals.map((entry) => ({
      number: entry.number,
      permission: entry.approval.permission,
      pattern: entry.approval.pattern,
      project: entry.approval.project ?? null,
      projectID: entry.projectID,
      when: when(entry),
      applies: entry.applies
    }))
    io.stdout(`${JSON.stringify(rows, null, 2)}\n`)
    return 0
  }
  if (approvals.length === 0) {
    io.stdout('No remembered approvals: no "always" reply has been stored.\n')
    return 0
  }
  const lines = [
    `Remembered approvals ("always" replies), oldest first:`,
    ...approvals.map((entry) => `  ${String(entry.number).padStart(3)}  ${describeApproval(entry)}`),
    "Forget one with `lathe permissions forget <n>`, or every one with `lathe permissions forget --all`."
  ]
  io.stdout(`${lines.join("\n")}\n`)
  return 0
}

/** `lathe permissions forget <n…|--all>`: removes remembered approvals by their number in the listing. */
export const forgetCommand = async (
  numbers: ReadonlyArray<string>,
  all: boolean,
  io: CliIO,
  usage: string
): Promise<number> => {
  const parsed = numbers.map(Number)
  if (all === numbers.length > 0 || parsed.some((n) => !Number.isInteger(n) || n <= 0)) {
    io.stderr(
      `lathe permissions forget: give the numbers \`lathe permissions approvals\` shows (e.g. forget 2), or --all, not both\n\n${usage}`
    )
    return 2
  }
  const data = await dataDir(io)
  const result = await Effect.runPromise(Effect.result(forgetApprovals(data, all ? "all" : parsed)))
  if (result._tag === "Failure") {
    io.stderr(`lathe permissions forget: ${result.failure.message}\n`)
    return 1
  }
  const removed = result.success
  if (removed.length === 0) io.stdout("No remembered approvals to forget.\n")
  else
    io.stdout(
      `Forgot ${removed.length} remembered approval${removed.length === 1 ? "" : "s"}; Lathe asks again:\n` +
        removed.map((entry) => `  ${describeApproval(entry)}\n`).join("")
    )
  return 0
}
