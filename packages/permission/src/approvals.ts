import { mkdir, readFile, rename, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { Rule, type Ruleset } from "@lathe/core"
import { Effect, Schema } from "effect"

/** The `source` of rules that "always" replies added. */
export const APPROVAL_SOURCE = "remembered approval"

/** The approvals file could not be read or written. */
export class ApprovalStoreError extends Schema.TaggedError<ApprovalStoreError>()("ApprovalStoreError", {
  path: Schema.String,
  message: Schema.String
}) {}

const ApprovalFile = Schema.fromJsonString(Schema.Struct({ version: Schema.Literal(1), rules: Schema.Array(Rule) }))
const decodeFile = Schema.decodeUnknownEffect(ApprovalFile)
const encodeFile = Schema.encodeSync(ApprovalFile)

/** Where a project's remembered approvals live: `<data>/permission/<projectID>.json`. */
export const approvalsPath = (dataDir: string, projectID: string): string =>
  join(dataDir, "permission", `${projectID.replace(/[^A-Za-z0-9._-]/g, "_")}.json`)

/**
 * Reads a project's remembered approvals. A missing file is no approvals; a file that is not valid JSON of the
 * expected shape fails with `ApprovalStoreError` naming the file, rather than silently forgetting approvals.
 */
export const readApprovals = Effect.fn("Approvals.read")(function* (path: string) {
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
  if (text === undefined) return [] as Ruleset
  const file = yield* decodeFile(text).pipe(
    Effect.mapError(
      (error) =>
        new ApprovalStoreError({
          path,
          message: `Remembered approvals in ${path} are corrupt (${error.message}). Fix or delete the file.`
        })
    )
  )
  return file.rules as Ruleset
})

/** Replaces a project's remembered approvals atomically (temp file + rename), creating the folder. */
export const writeApprovals = Effect.fn("Approvals.write")(function* (path: string, rules: Ruleset) {
  const temp = `${path}.${process.getBuiltinModule("node:crypto").randomBytes(4).toString("hex")}.tmp`
  yield* Effect.tryPromise({
    try: async () => {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 })
      await writeFile(temp, `${encodeFile({ version: 1, rules: [...rules] })}\n`, { mode: 0o600 })
      await rename(temp, path)
    },
    catch: (error) =>
      new ApprovalStoreError({ path, message: `Cannot save remembered approvals to ${path}: ${String(error)}` })
  })
})
