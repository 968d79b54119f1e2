import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises"
import { basename, dirname, join } from "node:path"
import { Rule, type Ruleset } from "@lathe/plugin"
import { Effect, Schema } from "effect"

/** The `source` of rules that "always" replies added. */
export const APPROVAL_SOURCE = "remembered approval"

/**
 * Permissions whose "always" reply lasts for the session only and is never stored for the project: an "always" on
 * the repeated-call guard (`doom_loop`) must not switch the guard off for every later session. Such rules in a file
 * an older Lathe wrote are listed, but not applied.
 */
export const SESSION_ONLY_PERMISSIONS: ReadonlySet<string> = new Set(["doom_loop"])

/** The approvals file could not be read or written. */
export class ApprovalStoreError extends Schema.TaggedError<ApprovalStoreError>()("ApprovalStoreError", {
  path: Schema.String,
  message: Schema.String
}) {}

/**
 * One remembered approval as stored: an allow rule, when it was remembered (ms since the epoch) and the project
 * folder it was given in. Files written before these two fields existed are read as they are, without them.
 */
export const Approval = Schema.Struct({
  ...Rule.fields,
  time: Schema.optionalKey(Schema.Number),
  project: Schema.optionalKey(Schema.String)
})
export type Approval = typeof Approval.Type

const ApprovalFile = Schema.fromJsonString(Schema.Struct({ version: Schema.Literal(1), rules: Schema.Array(Approval) }))
const decodeFile = Schema.decodeUnknownEffect(ApprovalFile)
const encodeFile = Schema.encodeSync(ApprovalFile)

/** Where a project's remembered approvals live: `<data>/permission/<projectID>.json`. */
export const approvalsPath = (dataDir: string, projectID: string): string =>
  join(dataDir, "permission", `${projectID.replace(/[^A-Za-z0-9._-]/g, "_")}.json`)

/** Whether a stored approval is applied (approvals of session-only permissions are not). */
export const approvalApplies = (approval: Approval): boolean => !SESSION_ONLY_PERMISSIONS.has(approval.permission)

/** The rules stored approvals contribute to a ruleset: the applied ones, without their bookkeeping fields. */
export const approvalRules = (approvals: ReadonlyArray<Approval>): Ruleset =>
  approvals.filter(approvalApplies).map(({ time: _time, project: _project, ...rule }) => rule)

/**
 * Reads every approval stored in a project's file, in the order they were remembered. A missing file is none; a
 * file that is not valid JSON of the expected shape fails with `ApprovalStoreError` naming the file, rather than
 * silently forgetting approvals.
 */
export const readApprovalList = Effect.fn("Approvals.readList")(function* (path: string) {
  const text = yield* Effect.tryPromise({
    try: () => readFile(path, "utf8"),
    catch: (error) => error
  }).pipe(
    Effect.catch((error) =>
      (error as NodeJS.ErrnoException).code === "ENOENT"
        ? Effect.succeed(undefined)
        : Effect.fail(new ApprovalStoreError({ path, message: `Cannot read remembered approvals ${path}: ${error}` }))
    )
  )
  if (text === undefined) return [] as Array<Approval>
  const file = yield* decodeFile(text).pipe(
    Effect.mapError(
      (error) =>
        new ApprovalStoreError({
          path,
          message: `Remembered approvals in ${path} are corrupt (${error.message}). Fix or delete the file.`
        })
    )
  )
  return [...file.rules]
})

/** Reads the rules a project's remembered approvals apply (see {@link approvalRules}); errors as `readApprovalList`. */
export const readApprovals = (path: string) => readApprovalList(path).pipe(Effect.map(approvalRules))

/** Replaces a project's remembered approvals atomically (temp file + rename), creating the folder. */
export const writeApprovals = Effect.fn("Approvals.write")(function* (
  path: string,
  approvals: ReadonlyArray<Approval>
) {
  const temp = `${path}.${process.getBuiltinModule("node:crypto").randomBytes(4).toString("hex")}.tmp`
  yield* Effect.tryPromise({
    try: async () => {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 })
      await writeFile(temp, `${encodeFile({ version: 1, rules: [...approvals] })}\n`, { mode: 0o600 })
      await rename(temp, path)
    },
    catch: (error) =>
      new ApprovalStoreError({ path, message: `Cannot save remembered approvals to ${path}: ${String(error)}` })
  })
})

/** One remembered approval as `lathe permissions approvals` lists it. */
export interface ListedApproval {
  /** Its number in the listing (1-based), which `forgetApprovals` takes. */
  readonly number: number
  /** The project id the file is named after. */
  readonly projectID: string
  /** The approvals file it is stored in. */
  readonly file: string
  readonly approval: Approval
  /** False for an approval of a session-only permission an older Lathe stored: it is not applied. */
  readonly applies: boolean
}

/** The approvals of every project under a data folder, and the files that could not be read. */
export interface ApprovalListing {
  readonly approvals: ReadonlyArray<ListedApproval>
  readonly problems: ReadonlyArray<ApprovalStoreError>
}

/**
 * Lists the remembered approvals of every project under `dataDir`, oldest first (approvals stored before times were
 * recorded come first, in file order), numbered from 1. A new approval is the newest, so it never renumbers the
 * ones listed before it. A corrupt file is reported in `problems` and the others are still listed.
 */
export const listApprovals = Effect.fn("Approvals.list")(function* (dataDir: string) {
  const folder = join(dataDir, "permission")
  const names = yield* Effect.promise(() => readdir(folder).catch((): Array<string> => []))
  const found: Array<Omit<ListedApproval, "number">> = []
  const problems: Array<ApprovalStoreError> = []
  for (const name of names.filter((entry) => entry.endsWith(".json")).sort()) {
    const file = join(folder, name)
    const read = yield* Effect.result(readApprovalList(file))
    if (read._tag === "Failure") problems.push(read.failure)
    else {
      const projectID = basename(name, ".json")
      for (const approval of read.success) found.push({ projectID, file, approval, applies: approvalApplies(approval) })
    }
  }
  // A stable sort: equal times keep file order.
  found.sort((a, b) => (a.approval.time ?? 0) - (b.approval.time ?? 0))
  const approvals = found.map((entry, index): ListedApproval => ({ ...entry, number: index + 1 }))
  return { approvals, problems } satisfies ApprovalListing
})

/** `forgetApprovals` was given a number the listing does not have. */
export class UnknownApproval extends Schema.TaggedError<UnknownApproval>()("UnknownApproval", {
  number: Schema.Number,
  message: Schema.String
}) {}

const sameApproval = (a: Approval, b: Approval): boolean =>
  a.permission === b.permission &&
  a.pattern === b.pattern &&
  a.action === b.action &&
  a.time === b.time &&
  a.project === b.project

/**
 * Removes remembered approvals by their number in {@link listApprovals}, or all of them, from every project under
 * `dataDir`, and returns what was removed. Each file is re-read just before it is rewritten, so an approval another
 * session remembered meanwhile is kept. A number the listing does not have fails with `UnknownApproval` and removes
 * nothing. A running session stops applying a forgotten approval at its next permission check.
 */
export const forgetApprovals = Effect.fn("Approvals.forget")(function* (
  dataDir: string,
  which: "all" | ReadonlyArray<number>
) {
  const { approvals } = yield* listApprovals(dataDir)
  const chosen = which === "all" ? approvals : approvals.filter((entry) => which.includes(entry.number))
  if (which !== "all") {
    const missing = which.find((number) => !approvals.some((entry) => entry.number === number))
    if (missing !== undefined)
      return yield* Effect.fail(
        new UnknownApproval({
          number: missing,
          message:
            approvals.length === 0
              ? `There is no remembered approval ${missing}: none are remembered.`
              : `There is no remembered approval ${missing}: they are numbered 1 to ${approvals.length} (see lathe permissions approvals).`
        })
      )
  }
  for (const file of new Set(chosen.map((entry) => entry.file))) {
    const gone = chosen.filter((entry) => entry.file === file).map((entry) => entry.approval)
    const stored = yield* readApprovalList(file)
    yield* writeApprovals(
      file,
      stored.filter((approval) => !gone.some((forgotten) => sameApproval(approval, forgotten)))
    )
  }
  return chosen
})
