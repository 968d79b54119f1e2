import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { hasPasswordUrl, isSecretName } from "@lathe/plugin/host"
import { Effect } from "effect"
import { scrubEnv, secretValues } from "../src/config/secret-values.js"
import { Config, type ConfigInfo, Paths } from "../src/index.js"

describe("isSecretName", () => {
  it("takes the old words anywhere, the new ones as whole words, and leaves ordinary names alone", () => {
    const secret = [
      "OPENAI_API_KEY",
      "GITHUB_TOKEN",
      "db_password",
      "AWS_SECRET_ACCESS_KEY",
      "GH_PAT",
      "CORP_AUTH",
      "NPM_CONFIG__AUTH",
      "BASIC_AUTH_HEADER",
      "GOOGLE_APPLICATION_CREDENTIALS",
      "MYSQL_PASSWD",
      "DB_PASS",
      "DB_PWD",
      "SENTRY_DSN",
      "SESSION_COOKIE",
      "SLACK_WEBHOOK_URL",
      "SSH_PASSPHRASE"
    ]
    const ordinary = ["PATH", "PWD", "OLDPWD", "SSH_AUTH_SOCK", "GIT_AUTHOR_NAME", "AUTHOR", "HOME", "EDITOR", "PATCH"]
    for (const name of secret) expect(isSecretName(name), name).toBe(true)
    for (const name of ordinary) expect(isSecretName(name), name).toBe(false)
  })
})

describe("hasPasswordUrl", () => {
  it("finds scheme://user:password@ anywhere in a value, and nothing in URLs without a password", () => {
    expect(hasPasswordUrl("postgres://u:pw@h/db")).toBe(true)
    expect(hasPasswordUrl("redis://:secret@cache:6379")).toBe(true)
    expect(hasPasswordUrl("--url=https://me:tok@git.example.com/x.git --quiet")).toBe(true)
    expect(hasPasswordUrl("postgres://u@h/db")).toBe(false)
    expect(hasPasswordUrl("http://localhost:8080/path")).toBe(false)
    expect(hasPasswordUrl("/usr/bin:/bin")).toBe(false)
  })
})

describe("secretValues", () => {
  it("collects every credential position of the config, the {env:} values and the provider keys of env", () => {
    const info = {
      provider: {
        corp: {
          type: "openai-compatible",
          apiKey: "sk-corp-apikey",
          baseURL: "https://bot:base-pw@llm.corp/v1",
          headers: { "X-Corp-Auth": "Bearer corp-header-token" },
          options: { apiKey: "sk-options-key", organization: "acme", fetchOptions: { token: "deep-token" } }
        }
      },
      store: { type: "postgres", url: "postgres://lathe:store-pw@db/lathe" },
      mcp: {
        github: { type: "local", command: ["gh-mcp"], env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_mcp" } },
        remote: {
          type: "remote",
          url: "https://svc:mcp-url-pw@mcp.example.com/",
          headers: { Authorization: "Bearer mcp-bearer" },
          oauth: { clientSecret: "oauth-client-secret" }
        }
      }
    } as unknown as ConfigInfo
    const values = secretValues(
      {
        info,
        envResolved: [
          { name: "CORP_TOKEN_SOURCE", value: "from-env-placeholder" },
          { name: "HOME", value: "/home/someone" }
        ]
      },
      { ANTHROPIC_API_KEY: "sk-ant-env", LATHE_STORE: "postgres://x:lathe-store-env@h/db", EDITOR: "vi" }
    )
    for (const value of [
      "sk-corp-apikey",
      "base-pw",
      "Bearer corp-header-token",
      "corp-header-token",
      "sk-options-key",
      "deep-token",
      "postgres://lathe:store-pw@db/lathe",
      "store-pw",
      "ghp_mcp",
      "mcp-url-pw",
      "mcp-bearer",
      "oauth-client-secret",
      "from-env-placeholder",
      "sk-ant-env",
      "lathe-store-env"
    ])
      expect(values, value).toContain(value)
    // Ordinary values a config may read are never treated as secrets: matching them would remove HOME and PATH.
    expect(values).not.toContain("/home/someone")
    expect(values).not.toContain("acme")
    expect(values).not.toContain("vi")
  })

  it.effect("a real config file: what {env:NAME} resolved to is recorded by the loader and becomes a secret", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "lathe-secrets-"))
      const project = join(dir, "project")
      mkdirSync(project)
      const env = { XDG_CONFIG_HOME: join(dir, "config"), LATHE_DATA_DIR: join(dir, "data"), HOME: join(dir, "h") }
      mkdirSync(join(dir, "config", "lathe"), { recursive: true })
      writeFileSync(
        join(dir, "config", "lathe", "lathe.json"),
        JSON.stringify({ mcp: { tool: { type: "local", command: ["x"], env: { URL: "https://h/?k={env:RAW_KEY}" } } } })
      )
      const config = yield* Effect.gen(function* () {
        return yield* Config
      }).pipe(
        Effect.provide(Config.layerWith({ ...env, RAW_KEY: "raw-key-from-env" })),
        Effect.provide(Paths.layer(project, env))
      )
      expect(config.envResolved).toEqual([{ name: "RAW_KEY", value: "raw-key-from-env" }])
      expect(config.info.mcp?.tool).toMatchObject({ env: { URL: "https://h/?k=raw-key-from-env" } })
      expect(secretValues(config, {})).toContain("raw-key-from-env")
    })
  )
})

describe("scrubEnv", () => {
  it("drops by name, by password URL and by held value (contained when long enough), keeps the rest and inherit", () => {
    const { env, dropped } = scrubEnv(
      {
        PATH: "/usr/bin:/bin",
        HOME: "/home/someone",
        GH_PAT: "ghp_x",
        DATABASE_URL: "postgres://u:pw@h/db",
        COPY: "prefix-held-secret-value",
        SHORT: "none",
        CONTAINS_SHORT: "none-of-that",
        KEPT_TOKEN: "t",
        UNSET: undefined
      },
      { secrets: ["held-secret-value", "none"], inherit: ["KEPT_TOKEN"] }
    )
    expect(env).toEqual({
      PATH: "/usr/bin:/bin",
      HOME: "/home/someone",
      CONTAINS_SHORT: "none-of-that",
      KEPT_TOKEN: "t"
    })
    expect(dropped).toEqual(["GH_PAT", "DATABASE_URL", "COPY", "SHORT"])
  })
})
