/**
 * What counts as a credential in a program's environment: the rule Lathe's host applies to every program it starts
 * (bash, MCP servers, formatters), for a plugin that starts one itself. Give it `ctx.secrets` as `secrets`.
 */

/** Names containing one of these (any case, anywhere in the name) are secrets: `MONKEY` is one too, by design. */
export const SECRET_NAME = /KEY|SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|COOKIE/i

/**
 * Whole words of a name (split at `_`, `-`, `.`) that make it a secret: `GH_PAT`, `CORP_AUTH`, `DB_PASS`, `SENTRY_DSN`,
 * but not `PATH` or `GIT_AUTHOR_NAME`.
 */
const SECRET_WORDS: ReadonlySet<string> = new Set([
  "PAT",
  "AUTH",
  "PASS",
  "PWD",
  "DSN",
  "CRED",
  "CREDS",
  "JWT",
  "BEARER",
  "WEBHOOK",
  "APIKEY"
])

/**
 * Names that match the rules but hold no secret: the working directories (`PWD`, `OLDPWD`) and the SSH agent's socket
 * path (`SSH_AUTH_SOCK`: a path, not a key; commands that use git over SSH need it, as they do outside Lathe).
 */
const NOT_SECRET: ReadonlySet<string> = new Set(["PWD", "OLDPWD", "SSH_AUTH_SOCK"])

/** Whether a variable name looks like it holds a secret. */
export const isSecretName = (name: string): boolean => {
  if (NOT_SECRET.has(name)) return false
  if (SECRET_NAME.test(name)) return true
  return name
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .some((word) => SECRET_WORDS.has(word))
}

/** `scheme://user:password@` (or `scheme://:password@`) anywhere in a text. */
const PASSWORD_URL = /[a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*:[^\s/?#@]+@/i

/** Whether a text holds a URL with a password in it (`postgres://u:pw@host/db`): a secret wherever it appears. */
export const hasPasswordUrl = (text: string): boolean => PASSWORD_URL.test(text)

/**
 * Secret values shorter than this are matched only when a variable's value is exactly the secret, longer ones when a
 * value contains them: a short dummy key such as `"none"` must not remove every variable that contains the word.
 */
export const MIN_CONTAINED_SECRET = 8

/**
 * The environment a child process gets: `base` without every variable that (1) has a secret-looking name
 * ({@link isSecretName}, or one of `names`), (2) holds a URL with a password ({@link hasPasswordUrl}) or (3) carries
 * one of `secrets` (its whole value, or containing it when the secret has at least {@link MIN_CONTAINED_SECRET}
 * characters), except the names in `inherit`, which pass as they are. `dropped` names what was removed (names only,
 * never values).
 * ```ts
 * spawn("prettier", args, { env: scrubEnv(process.env, { secrets: ctx.secrets }).env })
 * ```
 */
export const scrubEnv = (
  base: Readonly<Record<string, string | undefined>>,
  options: {
    readonly inherit?: ReadonlyArray<string>
    readonly secrets?: ReadonlyArray<string>
    /** More names that hold credentials whatever they look like (the host adds its providers' key variables). */
    readonly names?: ReadonlyArray<string>
  } = {}
): { readonly env: Record<string, string>; readonly dropped: ReadonlyArray<string> } => {
  const inherit = new Set(options.inherit ?? [])
  const names = new Set(options.names ?? [])
  const secrets = (options.secrets ?? []).filter((value) => value !== "")
  const exact = new Set(secrets)
  const contained = secrets.filter((value) => value.length >= MIN_CONTAINED_SECRET)
  const env: Record<string, string> = {}
  const dropped: Array<string> = []
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue
    const secret =
      names.has(name) ||
      isSecretName(name) ||
      hasPasswordUrl(value) ||
      exact.has(value) ||
      contained.some((secret) => value.includes(secret))
    if (secret && !inherit.has(name)) dropped.push(name)
    else env[name] = value
  }
  return { env, dropped }
}
