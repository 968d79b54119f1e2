import { describe, expect, it } from "@effect/vitest"
import { OpenApi } from "effect/http-api"
import { LatheApi } from "../src/api.js"

describe("the API definition", () => {
  const doc = OpenApi.fromApi(LatheApi)

  it("describes every route of the server, each behind the bearer scheme", () => {
    const routes = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item as Record<string, { security?: unknown }>).map(([method, op]) => ({
        route: `${method.toUpperCase()} ${path}`,
        security: op.security
      }))
    )
    expect(routes.map((r) => r.route).sort()).toEqual(
      [
        "GET /health",
        "GET /openapi.json",
        "GET /agents",
        "POST /sessions",
        "GET /sessions",
        "GET /sessions/summaries",
        "GET /sessions/{id}",
        "DELETE /sessions/{id}",
        "POST /sessions/{id}/prompt",
        "POST /sessions/{id}/abort",
        "GET /sessions/{id}/messages",
        "GET /sessions/{id}/diff",
        "GET /sessions/{id}/turns",
        "POST /sessions/{id}/undo",
        "POST /sessions/{id}/redo",
        "GET /events",
        "GET /permissions",
        "POST /permissions/{requestID}/reply",
        "GET /questions",
        "POST /questions/{requestID}/reply"
      ].sort()
    )
    for (const route of routes) expect(route.security, route.route).toEqual([{ bearer: [] }])
  })

  it("answers a prompt with 202 and errors as { error: { code, message } }", () => {
    const prompt = (doc.paths["/sessions/{id}/prompt"] as { post: { responses: Record<string, unknown> } }).post
    expect(Object.keys(prompt.responses).sort()).toEqual(["202", "400", "401", "404", "503"])
    expect(JSON.stringify(prompt.responses["404"])).toContain('"enum":["not_found"]')
  })
})
