import type { ProviderDescriptor, ProviderEnv, ProviderSettings } from "./descriptor.js"
import { promptFamilyOf, reasoningLevelOf } from "./families.js"
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
 * GitHub Copilot through a GitHub account: GitHub's OAuth device flow gives a GitHub token (kept as the credential's
 * `refresh`); that token is exchanged for a short-lived Copilot API token (`access`, renewed before it expires), which
 * authorises OpenAI-style Chat Completions at the API the exchange names (`endpoints.api`). Every URL can be moved by
 * a variable, so tests run the whole flow against servers on 127.0.0.1.
 */

/** The Copilot editor integration's OAuth app: the one GitHub's Copilot token exchange accepts. */
const CLIENT_ID = "Iv1.b507a08c87ecfe98"
const DEFAULT_API = "https://api.githubcopilot.com"

/** The editor identity Copilot's API asks every request to carry. */
const EDITOR_HEADERS: Readonly<Record<string, string>> = {
  "user-agent": "GitHubCopilotChat/0.26.7",
  "editor-version": "vscode/1.99.3",
  "editor-plugin-version": "copilot-chat/0.26.7",
  "copilot-integration-id": "vscode-chat"
}

/** Where the flow's requests go: `LATHE_GITHUB_URL`, `LATHE_COPILOT_TOKEN_URL` and `LATHE_COPILOT_CLIENT_ID` move them. */
export const copilotEndpoints = (env: ProviderEnv) => ({
  github: trimSlash(envOr(env, "LATHE_GITHUB_URL", "https://github.com")),
  token: envOr(env, "LATHE_COPILOT_TOKEN_URL", "https://api.github.com/copilot_internal/v2/token"),
  clientID: envOr(env, "LATHE_COPILOT_CLIENT_ID", CLIENT_ID)
})

/** The code a person types at `verificationUri`, and what the poll needs. */
export interface DeviceCode {
  readonly deviceCode: string
  readonly userCode: string
  readonly verificationUri: string
  /** Seconds the code lives. */
  readonly expiresIn: number
  /** Seconds to wait between polls. */
  readonly interval: number
}

const postJSON = (fetcher: typeof fetch, url: string, body: Record<string, string>) =>
  fetcher(url, {
    method: "POST",
    headers: { accept: "application/json", "content-type": "application/json", "user-agent": "lathe" },
    body: JSON.stringify(body)
  })

/** Step 1 of the device flow: `POST <github>/login/device/code`. */
export const requestDeviceCode = async (fetcher: typeof fetch, env: ProviderEnv): Promise<DeviceCode> => {
  const { github, clientID } = copilotEndpoints(env)
  const url = `${github}/login/device/code`
  const response = await postJSON(fetcher, url, { client_id: clientID, scope: "read:user" })
  const body = await jsonObject(response)
  const deviceCode = stringField(body.device_code)
  const userCode = stringField(body.user_code)
  const verificationUri = stringField(body.verification_uri)
  if (!response.ok || deviceCode === undefined || userCode === undefined || verificationUri === undefined)
    throw new SignInError(
      `GitHub did not give a device code (${url}: HTTP ${response.status}${errorText(body)})`,
      response.status,
      stringField(body.error)
    )
  return {
    deviceCode,
    userCode,
    verificationUri,
    expiresIn: numberField(body.expires_in) ?? 900,
    interval: numberField(body.interval) ?? 5
  }
}

const errorText = (body: Record<string, unknown>) => {
  const error = stringField(body.error)
  const description = stringField(body.error_description)
  return error === undefined ? "" : `: ${error}${description === undefined ? "" : ` — ${description}`}`
}

/** How the poll waits and tells time (injected so a test decides). */
export interface PollClock {
  readonly sleep: (ms: number) => Promise<void>
  readonly now: () => number
}

/**
 * Step 2: polls `POST <github>/login/oauth/access_token` until the person has entered the code (RFC 8628):
 * `authorization_pending` waits `interval`, `slow_down` waits the interval GitHub gives (else 5 s more),
 * `expired_token`, `access_denied` or the code's lifetime passing end it with a {@link SignInError}. Resolves with the
 * GitHub token.
 */
export const pollDeviceToken = async (
  fetcher: typeof fetch,
  env: ProviderEnv,
  code: DeviceCode,
  clock: PollClock
): Promise<string> => {
  const { github, clientID } = copilotEndpoints(env)
  const url = `${github}/login/oauth/access_token`
  const deadline = clock.now() + code.expiresIn * 1000
  let interval = code.interval
  for (;;) {
    await clock.sleep(interval * 1000)
    if (clock.now() > deadline) throw new SignInError("The code expired before it was entered.", 400, "expired_token")
    const response = await postJSON(fetcher, url, {
      client_id: clientID,
      device_code: code.deviceCode,
      grant_type: "urn:ietf:params:oauth:grant-type:device_code"
    })
    const body = await jsonObject(response)
    const token = stringField(body.access_token)
    if (token !== undefined) return token
    const error = stringField(body.error)
    if (error === "authorization_pending") continue
    if (error === "slow_down") {
      interval = numberField(body.interval) ?? interval + 5
      continue
    }
    if (error === "expired_token")
      throw new SignInError("The code expired before it was entered.", response.status, error)
    if (error === "access_denied") throw new SignInError("The sign-in was cancelled at GitHub.", response.status, error)
    throw new SignInError(
      `GitHub refused the sign-in (HTTP ${response.status}${errorText(body)}).`,
      response.status,
      error
    )
  }
}

/**
 * Step 3, and every renewal: `GET <token URL>` with the GitHub token gives a Copilot API token (`token`, `expires_at`
 * in epoch seconds, `endpoints.api`). A 401/403 means the account has no Copilot (or the GitHub token was revoked).
 */
export const exchangeCopilotToken = async (
  fetcher: typeof fetch,
  env: ProviderEnv,
  githubToken: string,
  now: number
): Promise<SignInCredential> => {
  const url = copilotEndpoints(env).token
  const response = await fetcher(url, {
    method: "GET",
    headers: { ...EDITOR_HEADERS, accept: "application/json", authorization: `token ${githubToken}` }
  })
  const body = await jsonObject(response)
  const token = stringField(body.token)
  if (!response.ok || token === undefined)
    throw new SignInError(
      response.status === 401 || response.status === 403
        ? `GitHub gave no Copilot token (HTTP ${response.status}): the account has no Copilot subscription, or the sign-in was revoked; run \`lathe auth login github-copilot\` again`
        : `GitHub gave no Copilot token (${url}: HTTP ${response.status}${errorText(body)})`,
      response.status
    )
  const endpoints = body.endpoints as Record<string, unknown> | undefined
  const endpoint = stringField(endpoints?.api)
  const expiresAt = numberField(body.expires_at)
  return {
    type: "oauth",
    refresh: githubToken,
    access: token,
    // Without an expiry, a token is renewed after 25 minutes (Copilot's tokens live 30).
    expires: expiresAt === undefined ? now + 25 * 60_000 : expiresAt * 1000,
    ...(endpoint === undefined ? {} : { endpoint: trimSlash(endpoint) })
  }
}

/** Whether a Chat Completions body ends with the person's message (`user`) or continues the agent's work (`agent`). */
const initiatorOf = (body: unknown): "user" | "agent" => {
  const messages = (body as { messages?: ReadonlyArray<{ role?: unknown }> } | undefined)?.messages
  return messages?.at(-1)?.role === "user" ? "user" : "agent"
}

const hasImage = (body: unknown): boolean =>
  ((body as { messages?: ReadonlyArray<{ content?: unknown }> } | undefined)?.messages ?? []).some(
    (message) =>
      Array.isArray(message.content) &&
      message.content.some((part) => (part as { type?: unknown } | null)?.type === "image_url")
  )

/**
 * The fetch the SDK gets: renews the Copilot token when it is about to expire (one renewal at a time, the renewed
 * token stored for the next run), sends requests to the API the exchange named (unless config moved the base URL),
 * and adds Copilot's headers.
 */
const copilotFetch = (settings: ProviderSettings): typeof fetch => {
  const fresh = renewingCredential({
    initial: settings.credential?.read() ?? (settings.apiKey ? { type: "oauth", refresh: settings.apiKey } : undefined),
    store: settings.credential,
    notSignedIn: () => new SignInError("Not signed in to GitHub Copilot: run `lathe auth login github-copilot`.", 401),
    renew: (current) => exchangeCopilotToken(settings.fetch, settings.env, current.refresh, Date.now())
  })
  return async (input, init) => {
    const credential = await fresh()
    let url = input instanceof Request ? input.url : String(input)
    if (settings.baseURL === undefined && credential.endpoint !== undefined && url.startsWith(DEFAULT_API))
      url = credential.endpoint + url.slice(DEFAULT_API.length)
    let parsed: unknown
    try {
      // Lathe's Chat Completions client sends its body as UTF-8 bytes (see `bodyBytes`); a string from elsewhere.
      const body = init?.body
      const text =
        typeof body === "string"
          ? body
          : body instanceof Uint8Array
            ? Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8")
            : undefined
      parsed = text === undefined ? undefined : JSON.parse(text)
    } catch {}
    const headers = {
      ...headerRecord(init?.headers),
      ...EDITOR_HEADERS,
      authorization: `Bearer ${credential.access}`,
      "openai-intent": "conversation-edits",
      "x-initiator": initiatorOf(parsed),
      ...(hasImage(parsed) ? { "copilot-vision-request": "true" } : {})
    }
    return settings.fetch(url, { ...init, headers })
  }
}

/** GitHub Copilot, signed in with a GitHub account (`lathe auth login github-copilot`); OpenAI-style Chat Completions. */
export const githubCopilot: ProviderDescriptor = {
  type: "github-copilot",
  name: "GitHub Copilot",
  aliases: ["copilot"],
  catalogID: "github-copilot",
  auth: "key",
  // A plain GITHUB_TOKEN (a personal access token) is not accepted by Copilot's token exchange: only a sign-in is.
  keyEnv: [],
  baseURL: { env: "LATHE_COPILOT_API_URL" },
  signIn: { kind: "device", label: "GitHub account (device code)" },
  // The newest small GPT: included in every Copilot plan without premium requests.
  defaultFamily: /^gpt-5(\.\d+)?-mini$/,
  defaultModel: "gpt-5-mini",
  imagesInToolResults: false,
  prompt: (modelID) => promptFamilyOf(modelID, "openai"),
  reasoning: (_model, reasoning) => ({ openaiCompatible: { reasoningEffort: reasoningLevelOf(reasoning) } }),
  // Lathe's own Chat Completions client (no SDK package to install), with the fetch that adds Copilot's token.
  load: async (settings, modelID) =>
    (await import("./chat-completions.js")).chatCompletionsModel(
      { ...settings, baseURL: settings.baseURL ?? DEFAULT_API, fetch: copilotFetch(settings) },
      modelID
    ),
  hints: {
    key: "sign in with a GitHub account that has Copilot: lathe auth login github-copilot",
    connect: "check that https://api.githubcopilot.com is reachable"
  }
}
