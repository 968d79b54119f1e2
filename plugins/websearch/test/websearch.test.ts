/**
 * The `websearch` and `codesearch` tools against local servers on 127.0.0.1 speaking each service's API (SearxNG's
 * JSON format, Brave's web search, Exa's and Tavily's search, GitHub's code search, Sourcegraph's GraphQL search): the
 * request each service gets (path, key header, query) and the text the model reads. Without a backend no tool is
 * offered; each call asks its permission first.
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import type { AnyTool, PermissionRequest } from "@lathe/plugin"
import { pluginContext, runTool } from "@lathe/plugin/testing"
import { createWebsearchPlugin } from "../src/index.js"
import { type FakeService, type ServiceRequest, startService } from "./helpers.js"

let services: Array<FakeService> = []
afterEach(async () => {
  await Promise.all(services.map((service) => service.close()))
  services = []
})

const serve = async (reply: Parameters<typeof startService>[0]) => {
  const service = await startService(reply)
  services.push(service)
  return service
}

/** The tools the plugin offers for this `websearch` config and environment. */
const toolsFor = async (
  websearch: Record<string, unknown> | undefined,
  env: Record<string, string> = {}
): Promise<ReadonlyArray<AnyTool>> => {
  const hooks = await createWebsearchPlugin({ env }).setup(
    pluginContext(process.cwd(), { config: websearch === undefined ? {} : { websearch } })
  )
  return hooks.tools ?? []
}

const tool = (tools: ReadonlyArray<AnyTool>, id: string): AnyTool => {
  const found = tools.find((candidate) => candidate.id === id)
  if (found === undefined) throw new Error(`no ${id} tool among ${tools.map((t) => t.id).join(", ")}`)
  return found
}

const only = (service: FakeService): ServiceRequest => {
  expect(service.requests).toHaveLength(1)
  return service.requests[0] as ServiceRequest
}

describe("@lathe/websearch: websearch backends", () => {
  it("SearxNG: GET /search?q=…&format=json on the configured instance; results as title, URL, snippet", async () => {
    const searx = await serve(() => ({
      body: {
        query: "effect 4 layers",
        results: [
          {
            title: "Effect <b>Layers</b>",
            url: "https://effect.website/docs/layers",
            content: "Layers  build\nservices."
          },
          { title: "", url: "https://example.com/untitled", content: "" },
          { title: "no url", content: "dropped" }
        ]
      }
    }))
    const tools = await toolsFor({ backend: "searxng", url: `${searx.url}/searx` })
    const out = await runTool(tool(tools, "websearch"), { query: "effect 4 layers" })
    const request = only(searx)
    expect(request.url.pathname).toBe("/searx/search")
    expect(request.url.searchParams.get("q")).toBe("effect 4 layers")
    expect(request.url.searchParams.get("format")).toBe("json")
    expect(out.output).toBe(
      [
        'Results for "effect 4 layers" (SearxNG):',
        "",
        "1. Effect Layers",
        "   https://effect.website/docs/layers",
        "   Layers build services.",
        "",
        "2. https://example.com/untitled",
        "   https://example.com/untitled"
      ].join("\n")
    )
    expect(out.metadata.backend).toBe("searxng")
  })

  it("SEARXNG_URL alone offers websearch (no config)", async () => {
    const searx = await serve(() => ({ body: { results: [] } }))
    const tools = await toolsFor(undefined, { SEARXNG_URL: searx.url })
    const out = await runTool(tool(tools, "websearch"), { query: "nothing here" })
    expect(out.output).toBe('No results for "nothing here" (SearxNG). Try other words.')
  })

  it("Brave: GET /res/v1/web/search with X-Subscription-Token and count; web.results", async () => {
    const brave = await serve(() => ({
      body: {
        type: "search",
        web: {
          results: [
            {
              title: "Node.js 24 release",
              url: "https://nodejs.org/en/blog/release/v24.0.0",
              description: "<strong>Node</strong> 24 is out."
            }
          ]
        }
      }
    }))
    const tools = await toolsFor({ backend: "brave", url: brave.url, max_results: 3 }, { BRAVE_API_KEY: "brv-key-1" })
    const out = await runTool(tool(tools, "websearch"), { query: "node 24 release" })
    const request = only(brave)
    expect(request.url.pathname).toBe("/res/v1/web/search")
    expect(request.url.searchParams.get("q")).toBe("node 24 release")
    expect(request.url.searchParams.get("count")).toBe("3")
    expect(request.headers["x-subscription-token"]).toBe("brv-key-1")
    expect(out.output).toContain(
      "1. Node.js 24 release\n   https://nodejs.org/en/blog/release/v24.0.0\n   Node 24 is out."
    )
  })

  it("Exa: POST /search { query, numResults, contents.highlights } with x-api-key; highlights as the snippet", async () => {
    const exa = await serve(() => ({
      body: {
        requestId: "r1",
        results: [
          { id: "1", title: "zod 4", url: "https://zod.dev/v4", highlights: ["Zod 4 is stable.", "It is faster."] },
          { id: "2", title: "text only", url: "https://example.com/t", text: "Full page text." }
        ]
      }
    }))
    const tools = await toolsFor({ backend: "exa", url: exa.url, key_env: "MY_EXA" }, { MY_EXA: "exa-key-2" })
    const out = await runTool(tool(tools, "websearch"), { query: "zod 4", max_results: 2 })
    const request = only(exa)
    expect(request.method).toBe("POST")
    expect(request.url.pathname).toBe("/search")
    expect(request.headers["x-api-key"]).toBe("exa-key-2")
    expect(request.body).toMatchObject({ query: "zod 4", numResults: 2, contents: { highlights: {} } })
    expect(out.output).toContain("1. zod 4\n   https://zod.dev/v4\n   Zod 4 is stable. … It is faster.")
    expect(out.output).toContain("2. text only\n   https://example.com/t\n   Full page text.")
  })

  it("Tavily: POST /search { query, max_results } with a bearer key; results[].content", async () => {
    const tavily = await serve(() => ({
      body: {
        query: "vitest 5",
        results: [
          { title: "Vitest 5", url: "https://vitest.dev/blog/vitest-5", content: "Vitest 5 is here.", score: 0.9 }
        ]
      }
    }))
    const tools = await toolsFor({ backend: "tavily", url: tavily.url }, { TAVILY_API_KEY: "tvly-key-3" })
    const out = await runTool(tool(tools, "websearch"), { query: "vitest 5" })
    const request = only(tavily)
    expect(request.url.pathname).toBe("/search")
    expect(request.headers.authorization).toBe("Bearer tvly-key-3")
    expect(request.body).toEqual({ query: "vitest 5", max_results: 8 })
    expect(out.output).toContain("1. Vitest 5\n   https://vitest.dev/blog/vitest-5\n   Vitest 5 is here.")
  })

  it("a service's error status reaches the model with the status and the service's words", async () => {
    const brave = await serve(() => ({ status: 429, body: { error: { code: "RATE_LIMITED" } } }))
    const tools = await toolsFor({ backend: "brave", url: brave.url }, { BRAVE_API_KEY: "k" })
    const failed = await runTool(tool(tools, "websearch"), { query: "anything" }).catch((error: unknown) => error)
    expect(failed).toMatchObject({ _tag: "ToolExecutionError" })
    expect((failed as { message: string }).message).toContain("Brave Search answered 429")
    expect((failed as { message: string }).message).toContain("RATE_LIMITED")
  })

  it("asks the websearch permission with the query before searching; a refusal sends nothing", async () => {
    const searx = await serve(() => ({ body: { results: [] } }))
    const tools = await toolsFor({ backend: "searxng", url: searx.url })
    const asked: Array<PermissionRequest> = []
    await runTool(tool(tools, "websearch"), { query: "first" }, { ask: async (request) => void asked.push(request) })
    expect(asked).toEqual([
      { permission: "websearch", patterns: ["first"], always: ["*"], metadata: { query: "first" } }
    ])
    const refused = await runTool(
      tool(tools, "websearch"),
      { query: "second" },
      {
        ask: async () => {
          throw new Error("refused")
        }
      }
    ).catch((error: unknown) => error)
    expect(refused).toBeDefined()
    expect(searx.requests.map((request) => request.url.searchParams.get("q"))).toEqual(["first"])
  })
})

describe("@lathe/websearch: which tools are offered", () => {
  it("no backend → no websearch and no codesearch tool", async () => {
    expect(await toolsFor(undefined)).toEqual([])
    expect(await toolsFor({})).toEqual([])
    // A GitHub token in the environment alone does not offer code search.
    expect(await toolsFor(undefined, { GITHUB_TOKEN: "ghp_x" })).toEqual([])
  })

  it('"off" offers nothing even with a key in the environment', async () => {
    expect(await toolsFor({ backend: "off" }, { TAVILY_API_KEY: "k" })).toEqual([])
  })

  it("a key in the environment picks its service when config names none", async () => {
    expect((await toolsFor(undefined, { EXA_API_KEY: "k" })).map((t) => t.id)).toEqual(["websearch"])
  })

  it("a backend named without its key fails setup with the fix", async () => {
    await expect(toolsFor({ backend: "brave" })).rejects.toThrow("BRAVE_API_KEY")
    await expect(toolsFor({ backend: "searxng" })).rejects.toThrow("websearch.url")
    await expect(toolsFor({ codesearch: { backend: "github" } })).rejects.toThrow("GITHUB_TOKEN")
  })
})

describe("@lathe/websearch: codesearch backends", () => {
  it("GitHub: GET /search/code with a bearer token and text matches; repository, path, URL, lines", async () => {
    const github = await serve(() => ({
      body: {
        total_count: 1,
        items: [
          {
            name: "llm.ts",
            path: "src/llm.ts",
            html_url: "https://github.com/acme/agent/blob/abc/src/llm.ts",
            repository: { full_name: "acme/agent" },
            text_matches: [{ fragment: "const call = streamLanguageModelCall({\n  model," }]
          }
        ]
      }
    }))
    const tools = await toolsFor({ codesearch: { backend: "github", url: github.url } }, { GITHUB_TOKEN: "ghp_token4" })
    expect(tools.map((t) => t.id)).toEqual(["codesearch"])
    const asked: Array<PermissionRequest> = []
    const out = await runTool(
      tool(tools, "codesearch"),
      { query: "streamLanguageModelCall language:ts" },
      { ask: async (request) => void asked.push(request) }
    )
    expect(asked[0]?.permission).toBe("codesearch")
    const request = only(github)
    expect(request.url.pathname).toBe("/search/code")
    expect(request.url.searchParams.get("q")).toBe("streamLanguageModelCall language:ts")
    expect(request.headers.authorization).toBe("Bearer ghp_token4")
    expect(request.headers.accept).toBe("application/vnd.github.text-match+json")
    expect(out.output).toBe(
      [
        'Code matching "streamLanguageModelCall language:ts" (GitHub code search):',
        "",
        "1. acme/agent src/llm.ts",
        "   https://github.com/acme/agent/blob/abc/src/llm.ts",
        "   | const call = streamLanguageModelCall({",
        "   |   model,"
      ].join("\n")
    )
  })

  it("Sourcegraph: POST /.api/graphql with the search query and count; file matches with line numbers", async () => {
    const sourcegraph = await serve(() => ({
      body: {
        data: {
          search: {
            results: {
              results: [
                {
                  __typename: "FileMatch",
                  repository: { name: "github.com/acme/agent" },
                  file: { path: "src/llm.ts", url: "/github.com/acme/agent/-/blob/src/llm.ts" },
                  lineMatches: [{ preview: "  const call = streamLanguageModelCall({", lineNumber: 41 }]
                },
                { __typename: "Repository", name: "github.com/acme/other" }
              ]
            }
          }
        }
      }
    }))
    const tools = await toolsFor(
      { codesearch: { backend: "sourcegraph", url: sourcegraph.url } },
      { SRC_ACCESS_TOKEN: "sgp_token5" }
    )
    const out = await runTool(tool(tools, "codesearch"), { query: "streamLanguageModelCall", max_results: 4 })
    const request = only(sourcegraph)
    expect(request.url.pathname).toBe("/.api/graphql")
    expect(request.headers.authorization).toBe("token sgp_token5")
    expect(request.body).toMatchObject({ variables: { query: "streamLanguageModelCall count:4" } })
    expect(out.output).toContain("1. github.com/acme/agent src/llm.ts")
    expect(out.output).toContain(`${sourcegraph.url}/github.com/acme/agent/-/blob/src/llm.ts`)
    expect(out.output).toContain("| 42: const call = streamLanguageModelCall({")
    expect(out.output).not.toContain("acme/other")
  })
})
