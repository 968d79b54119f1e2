/**
 * Where `lathe github run` puts a fix, and putting it there: on a pull request of this repository, its own branch; on a
 * pull request from a fork, or when the push to the branch is refused, a branch of this repository (`lathe/pr-<n>-<id>`)
 * and a pull request for it; on an issue or a manual run, a branch `lathe/<n>-<id>` and a pull request. git runs with
 * argv only; every branch name is either checked ({@link safeRef}) or made of digits and hex.
 */
import type { GithubApi } from "./github-api.js"
import { branchName, type GithubRequest, oneLine, pullBranchName, safeRef } from "./github-event.js"

/** Runs git with argv in the checkout; throws with git's stderr when it fails. */
export type Git = (...args: Array<string>) => Promise<string>

/** Where a fix to a pull request goes. */
export type PullTarget =
  /**
   * The pull request's branch is in this repository: push to it, or a pull request against it when the push is
   * refused, or when Lathe will not push there at all (`keepOff`, why: the default branch is never pushed to).
   */
  | { readonly kind: "branch"; readonly number: number; readonly branch: string; readonly keepOff?: string }
  /** The branch is in a fork, which the job's token cannot push to: a branch here and a pull request to the base. */
  | {
      readonly kind: "fork"
      readonly number: number
      readonly head: string
      readonly base: string
      readonly maintainerCanModify: boolean
    }

/**
 * Checks out the head of pull request `number` for the turn and says where its fix goes. The branch names come from
 * the API and are checked before git sees them. A fork's head is fetched as `refs/pull/<n>/head`, which GitHub keeps
 * in the base repository for every pull request.
 */
export const checkoutPull = async (
  git: Git,
  api: GithubApi,
  number: number,
  repository: string
): Promise<PullTarget> => {
  const pull = await api.pull(number)
  if (!safeRef(pull.headRef) || !safeRef(pull.baseRef))
    throw new Error("the pull request's branch name is not one git can take safely")
  const here = (pull.baseRepo || repository).toLowerCase()
  // A deleted fork has no head repository: its head still lives in refs/pull/<n>/head.
  if (pull.headRepo !== "" && pull.headRepo.toLowerCase() === here) {
    await git("fetch", "--no-tags", "origin", `+refs/heads/${pull.headRef}:refs/remotes/origin/${pull.headRef}`)
    await git("checkout", "-B", pull.headRef, `refs/remotes/origin/${pull.headRef}`)
    return {
      kind: "branch",
      number,
      branch: pull.headRef,
      ...(pull.headRef === pull.defaultBranch
        ? { keepOff: "it is the default branch, which Lathe never pushes to" }
        : {})
    }
  }
  await git("fetch", "--no-tags", "origin", `+refs/pull/${number}/head:refs/remotes/origin/lathe-pr-head`)
  await git("checkout", "--detach", "refs/remotes/origin/lathe-pr-head")
  return {
    kind: "fork",
    number,
    head: `${pull.headRepo || "a deleted fork"}:${pull.headRef}`,
    base: pull.baseRef,
    maintainerCanModify: pull.maintainerCanModify
  }
}

/** What went where, for the answer comment. */
export interface Landed {
  /** One or two sentences for the comment. */
  readonly text: string
  readonly branch: string
  readonly pull?: number
}

/** The reason in git's words when a push fails: the line that says "rejected" or "declined", else the message. */
const pushReason = (error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error)
  const line = message.match(/(\[remote rejected\][^!]*|remote: [^!]*?(?:declined|protected|denied)[^!]*)/i)?.[0]
  return oneLine(line ?? message, 200)
}

/**
 * Commits the checkout's changes (subject from the request, body naming who asked) and lands them where `target`
 * says; `undefined` is an issue or a manual run. `answer` is the turn's answer, quoted in a pull request's body.
 */
export const landChange = async (options: {
  readonly git: Git
  readonly api: GithubApi
  readonly request: GithubRequest
  readonly target: PullTarget | undefined
  readonly answer: string
  readonly shortId: string
}): Promise<Landed> => {
  const { git, api, request, target, answer, shortId } = options
  const subject = `lathe: ${oneLine(request.request || request.title || "requested change", 60)}`
  const asked = `Requested by @${request.author.login}${request.number === undefined ? "" : ` in #${request.number}`}.`
  const identity = ["-c", "user.name=lathe[bot]", "-c", "user.email=lathe[bot]@users.noreply.github.com"]
  await git("add", "-A")
  await git(...identity, "commit", "--no-verify", "-m", subject, "-m", asked)
  const open = async (branch: string, base: string, intro: string) => {
    await git("push", "origin", `HEAD:refs/heads/${branch}`)
    const pull = await api.createPull({ title: subject, head: branch, base, body: `${intro}${asked}\n\n${answer}` })
    return { branch, pull: pull.number, ref: `pull request #${pull.number}${pull.url ? ` (${pull.url})` : ""}` }
  }

  if (target === undefined) {
    const opened = await open(
      branchName(request.number, shortId),
      await api.defaultBranch(),
      request.number === undefined ? "" : `Closes #${request.number}. `
    )
    return { ...opened, text: `Opened ${opened.ref} from \`${opened.branch}\`.` }
  }

  const branch = pullBranchName(target.number, shortId)
  if (target.kind === "branch") {
    try {
      if (target.keepOff !== undefined) throw new Error(target.keepOff)
      await git("push", "origin", `HEAD:refs/heads/${target.branch}`)
      return { branch: target.branch, text: `Pushed the fix to \`${target.branch}\`.` }
    } catch (error) {
      // A protected branch, a hook that says no: the fix still reaches the pull request, as one against its branch.
      const reason = target.keepOff ?? pushReason(error)
      const opened = await open(
        branch,
        target.branch,
        `For #${target.number}: the fix could not be pushed to \`${target.branch}\` (${reason}), so this pull request ` +
          `proposes the fix against that branch; merging it updates #${target.number}. `
      )
      return {
        ...opened,
        text: `Could not push to \`${target.branch}\` (${reason}); opened ${opened.ref} against it from \`${branch}\` instead.`
      }
    }
  }

  // A fork's branch: this repository's token cannot write to it, whatever the pull request allows.
  const opened = await open(
    branch,
    target.base,
    `For #${target.number}, whose branch is in a fork (\`${target.head}\`) that this workflow cannot push to: this ` +
      `branch holds #${target.number}'s commits plus the fix, so merging it merges both (and #${target.number} can ` +
      `be closed), or #${target.number}'s author can pull \`${branch}\` into their branch${
        target.maintainerCanModify ? " (it allows edits by maintainers: a maintainer can push it there too)" : ""
      }. `
  )
  return {
    ...opened,
    text: `This pull request's branch is in a fork, which this workflow cannot push to: opened ${opened.ref} from \`${branch}\` (its commits plus the fix) against \`${target.base}\`.`
  }
}
