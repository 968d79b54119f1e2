/**
 * The few GitHub REST calls `lathe github run` makes, over `fetch`: the base URL from GITHUB_API_URL (a GitHub
 * Enterprise server's, or a test's), the token from GITHUB_TOKEN. A failed call is a {@link GithubApiError} naming the
 * call and the status; nothing here retries.
 */

/** A REST call that did not succeed. */
export class GithubApiError extends Error {
  readonly status: number
  constructor(what: string, status: number, detail: string) {
    super(`GitHub API ${what}: ${status === 0 ? detail : `HTTP ${status}${detail ? ` (${detail})` : ""}`}`)
    this.name = "GithubApiError"
    this.status = status
  }
}

type Json = Record<string, unknown>

/** A client for one repository (`owner/name`). */
export const githubApi = (baseUrl: string, token: string, repository: string) => {
  const base = baseUrl.replace(/\/+$/, "")
  const repo = `/repos/${repository.split("/").map(encodeURIComponent).join("/")}`
  const call = async (method: string, path: string, body?: unknown, accept = "application/vnd.github+json") => {
    let response: Response
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers: {
          accept,
          authorization: `Bearer ${token}`,
          "x-github-api-version": "2022-11-28",
          "user-agent": "lathe-github",
          ...(body === undefined ? {} : { "content-type": "application/json" })
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    } catch (error) {
      throw new GithubApiError(`${method} ${path}`, 0, error instanceof Error ? error.message : String(error))
    }
    const text = await response.text()
    if (!response.ok) {
      let message = ""
      try {
        message = String((JSON.parse(text) as Json).message ?? "")
      } catch {
        message = text.slice(0, 200)
      }
      throw new GithubApiError(`${method} ${path}`, response.status, message)
    }
    return text
  }
  const json = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const text = await call(method, path, body)
    return text === "" ? {} : (JSON.parse(text) as Json)
  }
  const list = async (path: string): Promise<Array<Json>> => {
    const text = await call("GET", `${path}${path.includes("?") ? "&" : "?"}per_page=100`)
    const parsed: unknown = JSON.parse(text)
    return Array.isArray(parsed) ? (parsed as Array<Json>) : []
  }
  return {
    /** The user's permission on the repository: `permission` (admin, write, read, none) and `role_name` (maintain…). */
    permission: async (user: string) => {
      const body = await json("GET", `${repo}/collaborators/${encodeURIComponent(user)}/permission`)
      return { permission: String(body.permission ?? "none"), role: String(body.role_name ?? "") }
    },
    /** Adds a reaction (`eyes`, `+1`, …) to an issue comment, a review comment, or an issue itself. */
    react: (target: { readonly kind: "issue" | "review" | "thread"; readonly id: number }, content: string) =>
      json(
        "POST",
        target.kind === "issue"
          ? `${repo}/issues/comments/${target.id}/reactions`
          : target.kind === "review"
            ? `${repo}/pulls/comments/${target.id}/reactions`
            : `${repo}/issues/${target.id}/reactions`,
        { content }
      ),
    /** Creates a comment on an issue or pull request; returns its id. */
    comment: async (number: number, body: string) =>
      Number((await json("POST", `${repo}/issues/${number}/comments`, { body })).id),
    /** Replaces a comment's text. */
    updateComment: (id: number, body: string) => json("PATCH", `${repo}/issues/comments/${id}`, { body }),
    /**
     * A pull request: its head branch and repository (a fork's when it is one; empty when the fork is gone), its base
     * branch and repository, and whether its author lets maintainers push to the head branch.
     */
    pull: async (number: number) => {
      const body = await json("GET", `${repo}/pulls/${number}`)
      const head = (body.head ?? {}) as Json
      const base = (body.base ?? {}) as Json
      return {
        headRef: String(head.ref ?? ""),
        headRepo: String(((head.repo ?? {}) as Json).full_name ?? ""),
        baseRef: String(base.ref ?? ""),
        baseRepo: String(((base.repo ?? {}) as Json).full_name ?? ""),
        defaultBranch: String(((base.repo ?? {}) as Json).default_branch ?? ""),
        maintainerCanModify: body.maintainer_can_modify === true
      }
    },
    /** The pull request's diff (the `diff` media type of the pull request). */
    diff: (number: number) => call("GET", `${repo}/pulls/${number}`, undefined, "application/vnd.github.diff"),
    /** The review comments on a pull request. */
    reviewComments: async (number: number) =>
      (await list(`${repo}/pulls/${number}/comments`)).map((c) => ({
        user: String(((c.user ?? {}) as Json).login ?? ""),
        path: String(c.path ?? ""),
        body: String(c.body ?? "")
      })),
    /** Opens a pull request; returns its number and web address. */
    createPull: async (pull: { title: string; head: string; base: string; body: string }) => {
      const body = await json("POST", `${repo}/pulls`, pull)
      return { number: Number(body.number), url: String(body.html_url ?? "") }
    },
    /** The repository's default branch. */
    defaultBranch: async () => String((await json("GET", repo)).default_branch ?? "main")
  }
}

/** A client; see {@link githubApi}. */
export type GithubApi = ReturnType<typeof githubApi>
