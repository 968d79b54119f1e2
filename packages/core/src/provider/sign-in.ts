/** The environment a sign-in reads its endpoints from (the same shape as `ProviderEnv`). */
type ProviderEnv = Readonly<Record<string, string | undefined>>

/**
 * Signing in with an account instead of an API key (GitHub Copilot's device flow, ChatGPT's browser sign-in): the
 * credential `lathe auth login` stores, how a descriptor reads and renews it during a run, and the bits of HTTP the
 * flows share. Offered only where the provider lets third-party tools sign in this way (see docs/providers.md).
 */

/** What a sign-in stores (in `auth.json`, 0600, beside the API keys). */
export interface SignInCredential {
  readonly type: "oauth"
  /** The long-lived token a new access token is made from (GitHub's OAuth token; ChatGPT's refresh token). */
  readonly refresh: string
  /** The short-lived token requests carry, when one was made. */
  readonly access?: string
  /** When `access` expires, in epoch milliseconds. */
  readonly expires?: number
  /** The account requests are made for (ChatGPT's `chatgpt_account_id`). */
  readonly accountId?: string
  /** Where the token exchange said the API lives (Copilot's `endpoints.api`). */
  readonly endpoint?: string
}

/** A provider's stored sign-in during a run: read it, and keep a renewed one (so the next run need not renew). */
export interface CredentialStore {
  readonly read: () => SignInCredential | undefined
  readonly write: (credential: SignInCredential) => void
}

/** How a provider signs in: `device` (a code typed at a web page) or `browser` (a redirect back to 127.0.0.1). */
export interface SignInMethod {
  readonly kind: "device" | "browser"
  /** The choice as the picker shows it ("GitHub account (device code)"). */
  readonly label: string
}

/** Renew an access token this long before it expires, so a request in flight never carries a dead one. */
export const RENEW_MARGIN_MS = 60_000

/** Whether `credential` has an access token still good for a while at `now`. */
export const accessValid = (credential: SignInCredential | undefined, now: number): boolean =>
  credential?.access !== undefined && (credential.expires ?? 0) - RENEW_MARGIN_MS > now

/**
 * The access token a run's requests carry, kept fresh: the one in hand while it is good; else one another Lathe
 * stored meanwhile (an interactive session beside a `lathe run`: a rotated refresh token makes the stored one the only
 * one that still works); else one renewal at a time (`renew`, given the credential in hand and the stored one), whose
 * result is kept and stored. Without a credential, `notSignedIn`'s error.
 */
export const renewingCredential = (options: {
  readonly initial: SignInCredential | undefined
  readonly store: CredentialStore | undefined
  readonly notSignedIn: () => Error
  readonly renew: (current: SignInCredential, stored: SignInCredential | undefined) => Promise<SignInCredential>
}): (() => Promise<SignInCredential>) => {
  let current = options.initial
  let renewing: Promise<SignInCredential> | undefined
  return async () => {
    if (current === undefined) throw options.notSignedIn()
    if (accessValid(current, Date.now())) return current
    const stored = options.store?.read()
    if (stored !== undefined && accessValid(stored, Date.now())) {
      current = stored
      return stored
    }
    renewing ??= options
      .renew(current, stored)
      .then((renewed) => {
        current = renewed
        options.store?.write(renewed)
        return renewed
      })
      .finally(() => {
        renewing = undefined
      })
    return renewing
  }
}

/** `url` without its trailing slashes. */
export const trimSlash = (url: string): string => url.replace(/\/+$/, "")

/** The value of variable `name` when set and not empty, else `fallback`. */
export const envOr = (env: ProviderEnv, name: string, fallback: string): string => {
  const value = env[name]
  return value !== undefined && value !== "" ? value : fallback
}

/** A sign-in endpoint's failure: the endpoint, its status and what it said (never a token). */
export class SignInError extends Error {
  readonly status: number
  readonly code: string | undefined
  constructor(message: string, status: number, code?: string) {
    super(message)
    this.name = "SignInError"
    this.status = status
    this.code = code
  }
}

/** The JSON object `response` carries, or `{}` when it carries none (an HTML error page). */
export const jsonObject = async (response: Response): Promise<Record<string, unknown>> => {
  const text = await response.text()
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {}
  } catch {
    return {}
  }
}

/** `value` when it is a non-empty string. */
export const stringField = (value: unknown): string | undefined =>
  typeof value === "string" && value !== "" ? value : undefined

/** `value` when it is a finite number. */
export const numberField = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? value : undefined

/** The headers of a fetch `init` as a plain record (lower-case names), to add to before sending. */
export const headerRecord = (headers: RequestInit["headers"]): Record<string, string> => {
  const record: Record<string, string> = {}
  if (headers === undefined) return record
  const entries: Iterable<[string, string]> =
    headers instanceof Headers
      ? headers.entries()
      : Array.isArray(headers)
        ? (headers as Array<[string, string]>)
        : Object.entries(headers as Record<string, string>)
  for (const [name, value] of entries) record[name.toLowerCase()] = value
  return record
}
