// Account sign-ins in core: the auth file keeps a sign-in beside the API keys (storing a key never loses one), a
// signed-in provider counts as set up and gets its credential store, the device-flow poll follows GitHub's answers
// (its waits read from an injected clock, so no test sleeps), and the ChatGPT account comes from the id token.
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "vitest"
import { credentialStore, readAuthFile, removeKey, storeKey, storeSignIn } from "../src/config/auth-store.js"
import { configuredProviders } from "../src/llm/configured.js"
import { accountIdOf, authorizeURL, pkcePair } from "../src/provider/chatgpt.js"
import { pollDeviceToken } from "../src/provider/github-copilot.js"
import { renewingCredential, type SignInCredential, SignInError } from "../src/provider/sign-in.js"

const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})
const dataEnv = () => {
  const dir = mkdtempSync(join(tmpdir(), "lathe-sign-in-"))
  dirs.push(dir)
  return { LATHE_DATA_DIR: join(dir, "data") }
}

const SIGN_IN = { type: "oauth", refresh: "gho_github", access: "copilot-1", expires: 1_000 } as const

describe("the auth file with sign-ins", () => {
  it("keeps a sign-in when a key is stored, lists both, and removes either", () => {
    const env = dataEnv()
    storeSignIn("github-copilot", SIGN_IN, env)
    storeKey("openai", "sk-openai", env)
    const file = join(env.LATHE_DATA_DIR, "auth.json")
    assert.strictEqual(statSync(file).mode & 0o777, 0o600)
    assert.deepStrictEqual(JSON.parse(readFileSync(file, "utf8")), {
      "github-copilot": SIGN_IN,
      openai: { type: "api", key: "sk-openai" }
    })
    const read = readAuthFile(env)
    assert.isTrue(read.ok)
    if (!read.ok) return
    // The sign-in's long-lived token stands for it among the keys (so the provider counts as set up).
    assert.deepStrictEqual(read.keys, { "github-copilot": "gho_github", openai: "sk-openai" })
    assert.deepStrictEqual(Object.keys(read.signIns), ["github-copilot"])
    assert.isTrue(removeKey("github-copilot", env))
    assert.deepStrictEqual(JSON.parse(readFileSync(file, "utf8")), { openai: { type: "api", key: "sk-openai" } })
  })

  it("a signed-in provider is set up with no config, and its credential store reads and keeps renewals", () => {
    const env = dataEnv()
    storeSignIn("chatgpt", { type: "oauth", refresh: "rt-1", access: "at-1", expires: 5, accountId: "acct" }, env)
    const provider = configuredProviders({}, env).find((p) => p.id === "chatgpt")
    assert.isDefined(provider)
    assert.strictEqual(provider?.keySource, "auth")
    assert.isTrue(provider?.ready)
    assert.strictEqual(provider?.settings.credential?.read()?.accountId, "acct")
    provider?.settings.credential?.write({ type: "oauth", refresh: "rt-2", access: "at-2", expires: 9 })
    assert.strictEqual(credentialStore("chatgpt", env).read()?.refresh, "rt-2")
    // Without a sign-in, the provider is not set up, and says how to sign in.
    const none = configuredProviders({ provider: { "github-copilot": {} } }, dataEnv())[0]
    assert.isFalse(none?.ready)
    assert.include(none?.problem ?? "", "lathe auth login github-copilot")
  })
})

/** GitHub's token endpoint answering each poll from `answers` in turn. */
const tokenEndpoint = async (answers: ReadonlyArray<Record<string, unknown>>) => {
  let polls = 0
  const server = createServer((_req, res) => {
    const answer = answers[polls] ?? answers.at(-1)
    polls += 1
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    env: { LATHE_GITHUB_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}` },
    polls: () => polls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** A clock that only records the waits asked for and moves on by them. */
const recordingClock = () => {
  let now = 0
  const waits: Array<number> = []
  return {
    waits,
    sleep: async (ms: number) => {
      waits.push(ms)
      now += ms
    },
    now: () => now
  }
}

const CODE = { deviceCode: "dc", userCode: "AB-CD", verificationUri: "https://github.com/login/device" }

describe("the device-flow poll", () => {
  it("waits the interval, then GitHub's longer one after slow_down (else 5 s more)", async () => {
    const server = await tokenEndpoint([
      { error: "authorization_pending" },
      { error: "slow_down", interval: 7 },
      { error: "slow_down" },
      { access_token: "gho_token", token_type: "bearer" }
    ])
    const clock = recordingClock()
    const token = await pollDeviceToken(fetch, server.env, { ...CODE, expiresIn: 900, interval: 5 }, clock)
    await server.close()
    assert.strictEqual(token, "gho_token")
    assert.deepStrictEqual(clock.waits, [5_000, 5_000, 7_000, 12_000])
  })

  it("ends with the code's expiry: expired_token, denied, or its lifetime passed without an answer", async () => {
    for (const [answer, code] of [
      [{ error: "expired_token" }, "expired_token"],
      [{ error: "access_denied" }, "access_denied"],
      [{ error: "authorization_pending" }, "expired_token"]
    ] as const) {
      const server = await tokenEndpoint([answer])
      const error = await pollDeviceToken(
        fetch,
        server.env,
        { ...CODE, expiresIn: 30, interval: 5 },
        recordingClock()
      ).catch((e: unknown) => e)
      await server.close()
      assert.instanceOf(error, SignInError)
      assert.strictEqual((error as SignInError).code, code)
    }
  })
})

describe("ChatGPT sign-in pieces", () => {
  it("the authorize URL asks for a code with an S256 challenge; the account comes from the id token", async () => {
    const pkce = await pkcePair()
    assert.notStrictEqual(pkce.verifier, pkce.challenge)
    const url = new URL(authorizeURL({}, "http://localhost:1455/auth/callback", pkce))
    assert.strictEqual(url.origin + url.pathname, "https://auth.openai.com/oauth/authorize")
    assert.strictEqual(url.searchParams.get("code_challenge"), pkce.challenge)
    assert.strictEqual(url.searchParams.get("code_challenge_method"), "S256")
    assert.strictEqual(url.searchParams.get("state"), pkce.state)
    const payload = Buffer.from(
      JSON.stringify({ "https://api.openai.com/auth": { chatgpt_account_id: "acct-42" } })
    ).toString("base64url")
    assert.strictEqual(accountIdOf(`e30.${payload}.sig`), "acct-42")
    assert.isUndefined(accountIdOf("not-a-jwt"))
  })
})

describe("renewingCredential", () => {
  const HOUR = 3_600_000
  const expired: SignInCredential = { type: "oauth", refresh: "r1", access: "old", expires: Date.now() - 1 }

  it("keeps a good token, renews an expired one once for concurrent requests, and stores the renewal", async () => {
    const written: Array<SignInCredential> = []
    let renewals = 0
    const fresh = renewingCredential({
      initial: expired,
      store: { read: () => undefined, write: (credential) => written.push(credential) },
      notSignedIn: () => new Error("not signed in"),
      renew: async (current) => {
        renewals += 1
        return { type: "oauth", refresh: current.refresh, access: `new-${renewals}`, expires: Date.now() + HOUR }
      }
    })
    const [a, b] = await Promise.all([fresh(), fresh()])
    assert.strictEqual(renewals, 1, "one renewal at a time")
    assert.strictEqual(a?.access, "new-1")
    assert.strictEqual(b?.access, "new-1")
    assert.strictEqual((await fresh()).access, "new-1", "the renewed token is kept")
    assert.deepStrictEqual(
      written.map((c) => c.access),
      ["new-1"]
    )
  })

  it("takes a token another Lathe stored meanwhile instead of renewing; without a credential, says so", async () => {
    const stored: SignInCredential = { type: "oauth", refresh: "r2", access: "theirs", expires: Date.now() + HOUR }
    const fresh = renewingCredential({
      initial: expired,
      store: { read: () => stored, write: () => assert.fail("nothing to store") },
      notSignedIn: () => new Error("not signed in"),
      renew: () => Promise.reject(new Error("no renewal expected"))
    })
    assert.strictEqual((await fresh()).access, "theirs")
    const none = renewingCredential({
      initial: undefined,
      store: undefined,
      notSignedIn: () => new Error("not signed in: run lathe auth login"),
      renew: () => Promise.reject(new Error("no renewal expected"))
    })
    await none().then(
      () => assert.fail("expected an error"),
      (error: Error) => assert.include(error.message, "lathe auth login")
    )
  })

  it("renews from the stored credential when it is newer but expired too (a rotated refresh token)", async () => {
    const storedExpired: SignInCredential = { type: "oauth", refresh: "rotated", access: "x", expires: Date.now() - 1 }
    const seen: Array<string | undefined> = []
    const fresh = renewingCredential({
      initial: expired,
      store: { read: () => storedExpired, write: () => undefined },
      notSignedIn: () => new Error("not signed in"),
      renew: async (current, stored) => {
        seen.push(current.refresh, stored?.refresh)
        return { type: "oauth", refresh: "r3", access: "a3", expires: Date.now() + HOUR }
      }
    })
    await fresh()
    assert.deepStrictEqual(seen, ["r1", "rotated"])
  })
})
