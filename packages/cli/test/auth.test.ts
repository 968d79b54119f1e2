/**
 * `lathe auth` in-process, against a real data directory: piped and typed keys (the hidden prompt over a stream that
 * acts as a terminal), what is refused, what an ambient or keyless provider is told, and how list and logout word
 * a key from the environment. Plus the helpers the commands share: masking and provider-name resolution.
 */
import { readFileSync, statSync, writeFileSync } from "node:fs"
import { PassThrough } from "node:stream"
import type { ConfigInfo } from "@lathe/core"
import { assert, describe, it } from "vitest"
import { authCommand } from "../src/commands/auth.js"
import type { CliIO } from "../src/io.js"
import { maskKey, providerNamesNear, resolveProvider } from "../src/provider-status.js"
import { sandbox } from "./helpers.js"

const KEY = "sk-test-stored-0123456789abcdef"

/** A terminal-like stdin: `isTTY`, and `setRawMode` recording each switch. */
const terminalInput = () => {
  const stream = new PassThrough() as PassThrough & { isTTY: boolean; setRawMode: (on: boolean) => unknown }
  const modes: Array<boolean> = []
  stream.isTTY = true
  stream.setRawMode = (on: boolean) => {
    modes.push(on)
    return stream
  }
  return { stream, modes }
}

/** Runs `lathe auth …` in this process; `input` is piped stdin (a string) or a terminal stream. */
const auth = async (
  args: ReadonlyArray<string>,
  options: { readonly env?: Record<string, string>; readonly input?: string | PassThrough } = {}
) => {
  const box = sandbox()
  return authIn(box, args, options)
}

const authIn = async (
  box: ReturnType<typeof sandbox>,
  args: ReadonlyArray<string>,
  options: { readonly env?: Record<string, string>; readonly input?: string | PassThrough } = {}
) => {
  let stdout = ""
  let stderr = ""
  const tty = typeof options.input === "object"
  const stdin = tty ? (options.input as PassThrough) : new PassThrough()
  if (!tty) stdin.end(options.input ?? "")
  const io: CliIO = {
    stdout: (text) => {
      stdout += text
    },
    stderr: (text) => {
      stderr += text
    },
    env: { ...box.env, ...options.env },
    cwd: box.project,
    isTTY: false,
    stdin,
    stdinIsTTY: tty
  }
  const code = await authCommand(args, io)
  return { code, stdout, stderr, box, file: `${box.env.LATHE_DATA_DIR}/auth.json` }
}

const stored = (file: string): unknown => JSON.parse(readFileSync(file, "utf8"))

const NO_CONFIG = { permission: [], agent: {}, plugin: [], instructions: [] } as ConfigInfo

describe("maskKey", () => {
  it("shows the first 4 and last 2 characters of a key of 12 or more, else only stars", () => {
    assert.strictEqual(maskKey("sk-ant-api03-abcdef"), "sk-a…ef")
    assert.strictEqual(maskKey("123456789012"), "1234…12")
    assert.strictEqual(maskKey("12345678901"), "****")
    assert.strictEqual(maskKey(""), "****")
  })
})

describe("resolveProvider and providerNamesNear", () => {
  it("takes a configured id, a type or an alias (stored under its type); anything else is unknown", () => {
    const info = { ...NO_CONFIG, provider: { work: { type: "openai" as const, baseURL: "http://127.0.0.1:1/v1" } } }
    assert.deepInclude(resolveProvider("work", info), { id: "work" })
    assert.strictEqual(resolveProvider("work", info)?.descriptor.type, "openai")
    assert.strictEqual(resolveProvider("anthropic", info)?.id, "anthropic")
    assert.strictEqual(resolveProvider("gemini", info)?.id, "google")
    assert.strictEqual(resolveProvider("bedrock", info)?.id, "amazon-bedrock")
    assert.isUndefined(resolveProvider("opnai", info))
  })

  it("lists every name, the close ones first", () => {
    const names = providerNamesNear("opnai", NO_CONFIG)
    assert.strictEqual(names[0], "openai")
    for (const type of ["anthropic", "google", "mistral", "ollama", "openai-compatible"]) assert.include(names, type)
    assert.strictEqual(providerNamesNear("antropic", NO_CONFIG)[0], "anthropic")
  })
})

describe("lathe auth login", () => {
  it("from a pipe: the first line, trimmed; an environment key is named as the winner, never shown", async () => {
    const run = await auth(["login", "openai"], { input: `  ${KEY}  \nsecond\n`, env: { OPENAI_API_KEY: "sk-env-1" } })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.deepStrictEqual(stored(run.file), { openai: { type: "api", key: KEY } })
    assert.include(run.stdout, "OPENAI_API_KEY is set in your environment, and it wins over the stored key")
    assert.notInclude(run.stdout + run.stderr, "sk-env-1")
    assert.notInclude(run.stdout + run.stderr, KEY)
  })

  it("refuses an empty key, and tells usage errors apart (exit 2)", async () => {
    const empty = await auth(["login", "anthropic"], { input: "  \n" })
    assert.strictEqual(empty.code, 1)
    assert.include(empty.stderr, "no key given; nothing stored")
    assert.throws(() => statSync(empty.file))
    assert.strictEqual((await auth([])).code, 2)
    assert.strictEqual((await auth(["login"])).code, 2)
    assert.strictEqual((await auth(["frobnicate"])).code, 2)
    assert.strictEqual((await auth(["list", "extra"])).code, 2)
    const help = await auth(["--help"])
    assert.strictEqual(help.code, 0)
    assert.include(help.stdout, "lathe auth login [provider]")
  })

  it("for an ambient or keyless provider explains what it uses, and stores nothing unless --force", async () => {
    const bedrock = await auth(["login", "amazon-bedrock"], { input: `${KEY}\n` })
    assert.strictEqual(bedrock.code, 0, bedrock.stderr)
    assert.include(bedrock.stdout, "its SDK finds your credentials itself")
    assert.include(bedrock.stdout, "AWS_ACCESS_KEY_ID")
    assert.include(bedrock.stdout, "Nothing stored")
    assert.throws(() => statSync(bedrock.file))
    const ollama = await auth(["login", "ollama"])
    assert.include(ollama.stdout, "needs no key")
    assert.include(ollama.stdout, "http://127.0.0.1:11434")
    const forced = await auth(["login", "ollama", "--force"], { input: "proxy-token-123456\n" })
    assert.strictEqual(forced.code, 0, forced.stderr)
    assert.deepStrictEqual(stored(forced.file), { ollama: { type: "api", key: "proxy-token-123456" } })
  })

  it("at a terminal: raw mode, a star per character, Backspace takes one back, the terminal is restored", async () => {
    const { stream, modes } = terminalInput()
    // --no-verify: this test is about the prompt (verifying is auth-picker.e2e.test.ts's, against a local server).
    const pending = auth(["login", "anthropic", "--no-verify"], { input: stream })
    await new Promise((resolve) => setTimeout(resolve, 50))
    stream.write(`${KEY}zz`)
    stream.write("\x7f\x7f")
    stream.write("\r")
    const run = await pending
    assert.strictEqual(run.code, 0, run.stderr)
    assert.deepStrictEqual(stored(run.file), { anthropic: { type: "api", key: KEY } })
    assert.deepStrictEqual(modes, [true, false])
    assert.notInclude(run.stderr, KEY)
    assert.include(run.stderr, "*".repeat(KEY.length + 2))
  })

  it("at a terminal Ctrl-C cancels: nothing stored, exit 1, raw mode off again", async () => {
    const { stream, modes } = terminalInput()
    const pending = auth(["login", "openai"], { input: stream })
    await new Promise((resolve) => setTimeout(resolve, 50))
    stream.write("sk-half-typed\x03")
    const run = await pending
    assert.strictEqual(run.code, 1)
    assert.include(run.stderr, "cancelled; nothing stored")
    assert.deepStrictEqual(modes, [true, false])
    assert.throws(() => statSync(run.file))
  })
})

describe("lathe auth list and logout", () => {
  it("names each key's source: stored (masked), env (the name only), config; an unknown stored id is listed", async () => {
    const box = sandbox()
    await authIn(box, ["login", "openai"], { input: `${KEY}\n` })
    await authIn(box, ["login", "mistral"], { input: "short\n" })
    const file = `${box.env.LATHE_DATA_DIR}/auth.json`
    const keys = stored(file) as Record<string, unknown>
    writeFileSync(file, JSON.stringify({ ...keys, "old-gateway": { type: "api", key: "gw-0123456789ab" } }))
    const env = { OPENAI_API_KEY: "sk-env-secret-value", GEMINI_API_KEY: "gm-env-secret-value" }
    const list = await authIn(box, ["list"], { env })
    assert.strictEqual(list.code, 0, list.stderr)
    assert.match(list.stdout, /^openai +OpenAI +env OPENAI_API_KEY; stored sk-t…ef unused$/m)
    assert.match(list.stdout, /^mistral +\S.* +stored \*\*\*\* \(lathe auth\)$/m)
    assert.match(list.stdout, /^google +\S.* +env GEMINI_API_KEY$/m)
    assert.match(list.stdout, /^old-gateway .*stored gw-0…ab — .*lathe auth logout old-gateway/m)
    for (const secret of [KEY, "short", "sk-env-secret-value", "gm-env-secret-value", "gw-0123456789ab"])
      assert.notInclude(list.stdout, secret)

    const gone = await authIn(box, ["logout", "old-gateway"])
    assert.strictEqual(gone.code, 0, gone.stderr)
    const logout = await authIn(box, ["logout", "openai"], { env })
    assert.include(logout.stdout, "Removed the stored key for openai.")
    assert.include(logout.stdout, "OPENAI_API_KEY is still set in your environment")
    const again = await authIn(box, ["logout", "openai"])
    assert.include(again.stdout, "No key was stored for openai")
    assert.deepStrictEqual(Object.keys(stored(file) as object), ["mistral"])
    const unknown = await authIn(box, ["logout", "nowhere"])
    assert.strictEqual(unknown.code, 1)
    assert.include(unknown.stderr, 'unknown provider "nowhere"')
  })

  it("--json never holds a key; a broken auth file is reported (exit 1)", async () => {
    const box = sandbox()
    await authIn(box, ["login", "anthropic"], { input: `${KEY}\n` })
    const json = await authIn(box, ["list", "--json"])
    assert.notInclude(json.stdout, KEY)
    assert.deepStrictEqual(JSON.parse(json.stdout), [
      { provider: "anthropic", name: "Anthropic", type: "anthropic", source: "auth", stored: "sk-t…ef", ready: true }
    ])
    writeFileSync(`${box.env.LATHE_DATA_DIR}/auth.json`, "{ not json")
    const broken = await authIn(box, ["list"])
    assert.strictEqual(broken.code, 1)
    assert.include(broken.stderr, "is not valid JSON")
  })
})
