import type { LanguageModelV4, LanguageModelV4CallOptions } from "@ai-sdk/provider"
import type { ProviderDescriptor, ProviderEnv, ProviderSettings } from "./descriptor.js"
import { openAISessionKey, reasoningLevelOf } from "./families.js"
import { importSDK } from "./sdk-import.js"
import {
  envOr,
  headerRecord,
  jsonObject,
  numberField,
  renewingCredential,
  type SignInCredential,
  SignInError,
  stringField,
  trimSlash
} from "./sign-in.js"

/**
 * ChatGPT (Plus, Pro, Business) through a ChatGPT account, as OpenAI's Codex signs in: OAuth authorization code with
 * PKCE, the browser sent back to a server on localhost; the access token is renewed with the refresh token before it
 * expires (the renewed tokens are stored); requests go to the ChatGPT backend's Responses endpoint with the account id
 * the id token names. `LATHE_CHATGPT_AUTH_URL` and `LATHE_CHATGPT_BASE_URL` move the endpoints (tests).
 */

/** Codex's OAuth client: the one ChatGPT's sign-in accepts, with its registered redirect `localhost:1455`. */
const CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann"
const CALLBACK_PORT = 1455
const SCOPE = "openid profile email offline_access"
/** The id token's claim that carries the ChatGPT account. */
const AUTH_CLAIM = "https://api.openai.com/auth"

/** The sign-in's issuer and client (`LATHE_CHATGPT_AUTH_URL`, `LATHE_CHATGPT_CALLBACK_PORT` move them for tests). */
export const chatgptEndpoints = (env: ProviderEnv) => ({
  issuer: trimSlash(envOr(env, "LATHE_CHATGPT_AUTH_URL", "https://auth.openai.com")),
  clientID: CLIENT_ID,
  callbackPort: Number(envOr(env, "LATHE_CHATGPT_CALLBACK_PORT", String(CALLBACK_PORT)))
})

/**
 * A PKCE pair (RFC 7636, S256) and the `state` that ties the callback to this sign-in. `node:crypto` loads here, at
 * sign-in, not with the provider list every start-up reads.
 */
export const pkcePair = async () => {
  const { createHash, randomBytes } = await import("node:crypto")
  const verifier = randomBytes(32).toString("base64url")
  const challenge = createHash("sha256").update(verifier).digest("base64url")
  return { verifier, challenge, state: randomBytes(16).toString("base64url") }
}

/** The page the browser opens to sign in, asking to be sent back to `redirectUri` with a code. */
export const authorizeURL = (
  env: ProviderEnv,
  redirectUri: string,
  pkce: { readonly challenge: string; readonly state: string }
): string => {
  const { issuer, clientID } = chatgptEndpoints(env)
  const query = new URLSearchParams({
    response_type: "code",
    client_id: clientID,
    redirect_uri: redirectUri,
    scope: SCOPE,
    code_challenge: pkce.challenge,
    code_challenge_method: "S256",
    id_token_add_organizations: "true",
    codex_cli_simplified_flow: "true",
    state: pkce.state,
    originator: "lathe"
  })
  return `${issuer}/oauth/authorize?${query.toString()}`
}

/** The claims of a JWT (unverified: only read for the account id and expiry of tokens we were just given). */
const claimsOf = (jwt: string | undefined): Record<string, unknown> => {
  const payload = jwt?.split(".")[1]
  if (payload === undefined) return {}
  try {
    const parsed: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

/** The ChatGPT account a token is for (`chatgpt_account_id` in its auth claim). */
export const accountIdOf = (jwt: string | undefined): string | undefined =>
  stringField((claimsOf(jwt)[AUTH_CLAIM] as Record<string, unknown> | undefined)?.chatgpt_account_id)

/** A token response as a credential: `expires_in`, else the access token's `exp`, else an hour. */
const credentialFrom = (
  body: Record<string, unknown>,
  previous: SignInCredential | undefined,
  now: number
): SignInCredential | undefined => {
  const access = stringField(body.access_token)
  const refresh = stringField(body.refresh_token) ?? previous?.refresh
  if (access === undefined || refresh === undefined) return undefined
  const expiresIn = numberField(body.expires_in)
  const exp = numberField(claimsOf(access).exp)
  const idToken = stringField(body.id_token)
  const accountId = accountIdOf(idToken) ?? accountIdOf(access) ?? previous?.accountId
  return {
    type: "oauth",
    refresh,
    access,
    expires: expiresIn !== undefined ? now + expiresIn * 1000 : exp !== undefined ? exp * 1000 : now + 3_600_000,
    ...(accountId === undefined ? {} : { accountId })
  }
}

const tokenError = (what: string, url: string, response: Response, body: Record<string, unknown>) => {
  const error = stringField(body.error) ?? stringField((body.error as Record<string, unknown> | undefined)?.code)
  return new SignInError(
    `${what} (${url}: HTTP ${response.status}${error === undefined ? "" : `: ${error}`})`,
    response.status,
    error
  )
}

/** Trades the callback's `code` for tokens: `POST <issuer>/oauth/token`, form-encoded, with the PKCE verifier. */
export const exchangeCode = async (
  fetcher: typeof fetch,
  env: ProviderEnv,
  exchange: { readonly code: string; readonly verifier: string; readonly redirectUri: string },
  now: number
): Promise<SignInCredential> => {
  const { issuer, clientID } = chatgptEndpoints(env)
  const url = `${issuer}/oauth/token`
  const response = await fetcher(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code: exchange.code,
      redirect_uri: exchange.redirectUri,
      client_id: clientID,
      code_verifier: exchange.verifier
    }).toString()
  })
  const body = await jsonObject(response)
  const credential = response.ok ? credentialFrom(body, undefined, now) : undefined
  if (credential === undefined) throw tokenError("ChatGPT did not sign in", url, response, body)
  return credential
}

/**
 * A new access token from the refresh token: `POST <issuer>/oauth/token` (JSON, `grant_type: refresh_token`). The
 * answer may carry a new refresh token, which replaces the old one (it is then the only one that works).
 */
export const refreshChatGPT = async (
  fetcher: typeof fetch,
  env: ProviderEnv,
  previous: SignInCredential,
  now: number
): Promise<SignInCredential> => {
  const { issuer, clientID } = chatgptEndpoints(env)
  const url = `${issuer}/oauth/token`
  const response = await fetcher(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({
      client_id: clientID,
      grant_type: "refresh_token",
      refresh_token: previous.refresh,
      scope: "openid profile email"
    })
  })
  const body = await jsonObject(response)
  const credential = response.ok ? credentialFrom(body, previous, now) : undefined
  if (credential === undefined)
    throw tokenError(
      response.status === 400 || response.status === 401
        ? "The ChatGPT sign-in has expired or was revoked; run `lathe auth login chatgpt` again"
        : "ChatGPT did not renew the sign-in",
      url,
      response,
      body
    )
  return credential
}

/**
 * The fetch the SDK gets: a fresh access token (renewed once at a time, the renewed tokens stored), the account
 * header, and the headers the ChatGPT backend expects of a Codex-style client.
 */
const chatgptFetch = (settings: ProviderSettings): typeof fetch => {
  const fresh = renewingCredential({
    initial: settings.credential?.read(),
    store: settings.credential,
    notSignedIn: () => new SignInError("Not signed in to ChatGPT: run `lathe auth login chatgpt`.", 401),
    // The refresh token rotates: renew from the stored credential when there is one.
    renew: (current, stored) => refreshChatGPT(settings.fetch, settings.env, stored ?? current, Date.now())
  })
  return async (input, init) => {
    const credential = await fresh()
    const headers: Record<string, string> = {
      ...headerRecord(init?.headers),
      authorization: `Bearer ${credential.access}`,
      "openai-beta": "responses=experimental",
      originator: "lathe"
    }
    if (credential.accountId !== undefined) headers["chatgpt-account-id"] = credential.accountId
    return settings.fetch(input, { ...init, headers })
  }
}

/**
 * What the ChatGPT backend needs of a Responses request, which the Platform API does not: the system prompt as
 * `instructions` (system messages are not taken as input), nothing stored (`store: false`, so reasoning travels as
 * encrypted items between steps), and no output-token cap (the backend refuses `max_output_tokens`).
 */
const backendOptions = (options: LanguageModelV4CallOptions): LanguageModelV4CallOptions => {
  const system = options.prompt.flatMap((message) => (message.role === "system" ? [message.content] : []))
  const openai = options.providerOptions?.openai ?? {}
  const { maxOutputTokens: _refused, ...rest } = options
  return {
    ...rest,
    prompt: options.prompt.filter((message) => message.role !== "system"),
    providerOptions: {
      ...options.providerOptions,
      openai: {
        ...openai,
        instructions: system.join("\n\n"),
        store: false,
        include: ["reasoning.encrypted_content"],
        reasoningSummary: openai.reasoningSummary ?? "auto"
      }
    }
  }
}

/** `model` with {@link backendOptions} applied to every call. */
const forBackend = (model: LanguageModelV4): LanguageModelV4 => ({
  specificationVersion: model.specificationVersion,
  provider: model.provider,
  modelId: model.modelId,
  supportedUrls: model.supportedUrls,
  doGenerate: (options) => model.doGenerate(backendOptions(options)),
  doStream: (options) => model.doStream(backendOptions(options))
})

/** ChatGPT (Plus/Pro/Business), signed in with a ChatGPT account (`lathe auth login chatgpt`); OpenAI's Responses. */
export const chatgpt: ProviderDescriptor = {
  type: "chatgpt",
  name: "ChatGPT (subscription)",
  aliases: ["codex"],
  catalogID: "openai",
  auth: "key",
  keyEnv: [],
  baseURL: { default: "https://chatgpt.com/backend-api/codex", env: "LATHE_CHATGPT_BASE_URL" },
  signIn: { kind: "browser", label: "ChatGPT account (browser sign-in)" },
  // The newest Codex model (what a ChatGPT plan's Codex use is for).
  defaultFamily: /^gpt-5(\.\d+)?-codex$/,
  defaultModel: "gpt-5.1-codex",
  imagesInToolResults: true,
  prompt: "openai",
  cache: () => ({ kind: "session-key", options: openAISessionKey }),
  reasoning: (_model, reasoning) => ({ openai: { reasoningEffort: reasoningLevelOf(reasoning) } }),
  load: async (settings, modelID) => {
    const { createOpenAI } = await importSDK("@ai-sdk/openai", "ChatGPT", () => import("@ai-sdk/openai"))
    const provider = createOpenAI({
      // The SDK wants a key; the fetch replaces it with the signed-in account's token.
      apiKey: "chatgpt-sign-in",
      baseURL: settings.baseURL ?? "",
      ...(settings.headers ? { headers: { ...settings.headers } } : {}),
      fetch: chatgptFetch(settings),
      ...settings.options
    })
    return forBackend(provider.responses(modelID))
  },
  hints: {
    key: "sign in with a ChatGPT Plus/Pro account: lathe auth login chatgpt",
    connect: "check that https://chatgpt.com is reachable"
  }
}
