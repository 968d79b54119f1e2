import type { CodeBackendConfig, WebBackendConfig } from "./settings.js"

/** One web search hit, as every backend's answer is reduced to. */
export interface SearchResult {
  readonly title: string
  readonly url: string
  readonly snippet: string
}

/** One code search hit: where it is and the matching lines. */
export interface CodeResult {
  readonly repository: string
  readonly path: string
  readonly url: string
  readonly lines: ReadonlyArray<string>
}

/** How one search is asked. */
export interface SearchRequest {
  readonly query: string
  readonly limit: number
  readonly signal: AbortSignal
  readonly fetch: typeof fetch
}

/** A backend answered with an error status or a body that is not what its API documents. */
export class SearchFailed extends Error {
  override readonly name = "SearchFailed"
}

const record = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {}
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])
const text = (value: unknown): string => (typeof value === "string" ? value : "")

/** `path` on `base` (a base with a path of its own, such as `https://host/searx`, keeps it). */
const endpoint = (base: string, path: string): URL =>
  new URL(path.replace(/^\//, ""), base.endsWith("/") ? base : `${base}/`)

/** Sends one request and parses its JSON body; a non-2xx status is a `SearchFailed` naming the service and status. */
const requestJson = async (service: string, url: URL, init: RequestInit, request: SearchRequest): Promise<unknown> => {
  const response = await request.fetch(url, { ...init, signal: request.signal })
  const body = await response.text()
  if (!response.ok)
    throw new SearchFailed(
      `${service} answered ${response.status} ${response.statusText}: ${body.slice(0, 300)}`.trim()
    )
  try {
    return JSON.parse(body) as unknown
  } catch {
    throw new SearchFailed(`${service} answered with something that is not JSON: ${body.slice(0, 200)}`)
  }
}

const json = { "content-type": "application/json", accept: "application/json" }

/** Collapses whitespace and strips the markup some services put in snippets (`<strong>`). */
const clean = (value: string): string =>
  value
    .replace(/<[^>]+>/g, "")
    .replace(/\s+/g, " ")
    .trim()

/** A hit from a service's result object, or nothing when it has no URL. */
const hit = (title: unknown, url: unknown, snippet: unknown): ReadonlyArray<SearchResult> =>
  text(url) === "" ? [] : [{ title: clean(text(title)) || text(url), url: text(url), snippet: clean(text(snippet)) }]

/**
 * Queries a web backend. Each service's documented request and answer:
 * - SearxNG: `GET /search?q=&format=json` (the instance must list `json` in `search.formats`) → `results[]` of
 *   `{ title, url, content }`;
 * - Brave: `GET /res/v1/web/search?q=&count=` with `X-Subscription-Token` → `web.results[]` of `{ title, url,
 *   description }`;
 * - Exa: `POST /search` `{ query, numResults, contents: { highlights } }` with `x-api-key` → `results[]` of `{ title,
 *   url, highlights[], text }`;
 * - Tavily: `POST /search` `{ query, max_results }` with `Authorization: Bearer` → `results[]` of `{ title, url,
 *   content }`.
 */
export const searchWeb = async (
  backend: WebBackendConfig,
  request: SearchRequest
): Promise<ReadonlyArray<SearchResult>> => {
  const { query, limit } = request
  switch (backend.name) {
    case "searxng": {
      const url = endpoint(backend.url, "search")
      url.searchParams.set("q", query)
      url.searchParams.set("format", "json")
      const body = record(await requestJson("SearxNG", url, { headers: { accept: "application/json" } }, request))
      return list(body.results).flatMap((r) => hit(record(r).title, record(r).url, record(r).content))
    }
    case "brave": {
      const url = endpoint(backend.url, "res/v1/web/search")
      url.searchParams.set("q", query)
      url.searchParams.set("count", String(limit))
      const headers = { accept: "application/json", "x-subscription-token": backend.key ?? "" }
      const body = record(await requestJson("Brave Search", url, { headers }, request))
      return list(record(body.web).results).flatMap((r) => hit(record(r).title, record(r).url, record(r).description))
    }
    case "exa": {
      const payload = { query, numResults: limit, contents: { highlights: { maxCharacters: 400 } } }
      const init = {
        method: "POST",
        headers: { ...json, "x-api-key": backend.key ?? "" },
        body: JSON.stringify(payload)
      }
      const body = record(await requestJson("Exa", endpoint(backend.url, "search"), init, request))
      return list(body.results).flatMap((r) => {
        const result = record(r)
        const highlights = list(result.highlights)
          .map(text)
          .filter((line) => line !== "")
        return hit(
          result.title,
          result.url,
          highlights.length > 0 ? highlights.join(" … ") : text(result.text).slice(0, 400)
        )
      })
    }
    case "tavily": {
      const payload = { query, max_results: limit }
      const headers = { ...json, authorization: `Bearer ${backend.key ?? ""}` }
      const init = { method: "POST", headers, body: JSON.stringify(payload) }
      const body = record(await requestJson("Tavily", endpoint(backend.url, "search"), init, request))
      return list(body.results).flatMap((r) => hit(record(r).title, record(r).url, record(r).content))
    }
  }
}

const SOURCEGRAPH_QUERY = `query Search($query: String!) {
  search(query: $query, version: V3) {
    results {
      results {
        __typename
        ... on FileMatch {
          repository { name }
          file { path url }
          lineMatches { preview lineNumber }
        }
      }
    }
  }
}`

/**
 * Queries a code backend:
 * - GitHub: `GET /search/code?q=&per_page=` with `Authorization: Bearer` and the `text-match` media type → `items[]`
 *   of `{ path, html_url, repository.full_name, text_matches[].fragment }`;
 * - Sourcegraph: `POST /.api/graphql` (the `search` query, `count:` in the query) with `Authorization: token` when
 *   there is one → `data.search.results.results[]` file matches with their line matches.
 */
export const searchCode = async (
  backend: CodeBackendConfig,
  request: SearchRequest
): Promise<ReadonlyArray<CodeResult>> => {
  const { query, limit } = request
  if (backend.name === "github") {
    const url = endpoint(backend.url, "search/code")
    url.searchParams.set("q", query)
    url.searchParams.set("per_page", String(limit))
    const headers = {
      accept: "application/vnd.github.text-match+json",
      "x-github-api-version": "2022-11-28",
      authorization: `Bearer ${backend.token ?? ""}`
    }
    const body = record(await requestJson("GitHub code search", url, { headers }, request))
    return list(body.items).flatMap((item) => {
      const entry = record(item)
      if (text(entry.html_url) === "") return []
      return [
        {
          repository: text(record(entry.repository).full_name),
          path: text(entry.path),
          url: text(entry.html_url),
          lines: list(entry.text_matches).map((match) => text(record(match).fragment).trim())
        }
      ]
    })
  }
  const headers = { ...json, ...(backend.token ? { authorization: `token ${backend.token}` } : {}) }
  const payload = { query: SOURCEGRAPH_QUERY, variables: { query: `${query} count:${limit}` } }
  const init = { method: "POST", headers, body: JSON.stringify(payload) }
  const body = record(await requestJson("Sourcegraph", endpoint(backend.url, ".api/graphql"), init, request))
  const errors = list(body.errors)
  if (errors.length > 0) throw new SearchFailed(`Sourcegraph: ${text(record(errors[0]).message)}`)
  const results = list(record(record(record(body.data).search).results).results)
  const base = backend.url.replace(/\/$/, "")
  return results
    .flatMap((item) => {
      const match = record(item)
      if (match.__typename !== "FileMatch") return []
      const file = record(match.file)
      const path = text(file.url)
      return [
        {
          repository: text(record(match.repository).name),
          path: text(file.path),
          url: path.startsWith("/") ? `${base}${path}` : path,
          lines: list(match.lineMatches).map((line) => {
            const entry = record(line)
            const number = typeof entry.lineNumber === "number" ? `${entry.lineNumber + 1}: ` : ""
            return `${number}${text(entry.preview).trim()}`
          })
        }
      ]
    })
    .slice(0, limit)
}
