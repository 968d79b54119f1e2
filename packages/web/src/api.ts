/**
 * The page's side of `lathe serve`'s API: the token (taken once from the URL's fragment, then kept in the tab's
 * sessionStorage only), JSON calls that carry it, and the SSE stream read with fetch (EventSource cannot send an
 * Authorization header, and the token must never be in a URL the server logs).
 */

const TOKEN_KEY = "lathe.token"

/** The server refused the token (or there is none): the page shows the token form, never data. */
export class NeedToken extends Error {
  constructor(readonly refused: boolean) {
    super(refused ? "The server refused the token." : "No token yet.")
  }
}

/** Moves `#token=…` from the address bar into sessionStorage; the URL keeps no trace of it (history included). */
export const adoptTokenFromUrl = (): void => {
  const match = /(?:^#|&)token=([^&]*)/.exec(location.hash)
  if (match === null) return
  sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1] ?? ""))
  history.replaceState(null, "", `${location.pathname}${location.search}`)
}

export const setToken = (token: string): void => sessionStorage.setItem(TOKEN_KEY, token)
const token = (): string | null => sessionStorage.getItem(TOKEN_KEY)

/** A JSON call to the API; a 401 forgets the token and throws {@link NeedToken}. */
export const api = async <T>(path: string, body?: unknown, method?: string): Promise<T> => {
  const current = token()
  if (current === null || current === "") throw new NeedToken(false)
  const response = await fetch(path, {
    method: method ?? (body === undefined ? "GET" : "POST"),
    headers: {
      authorization: `Bearer ${current}`,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  if (response.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY)
    throw new NeedToken(true)
  }
  const text = await response.text()
  const parsed: unknown = text === "" ? undefined : JSON.parse(text)
  if (!response.ok) {
    const message = (parsed as { error?: { message?: string } } | undefined)?.error?.message
    throw new Error(message ?? `${response.status} ${response.statusText}`)
  }
  return parsed as T
}

/** What the page reads of an event's data: a new session's id and parent, and the call that started it. */
export interface EventData {
  readonly session?: { readonly id: string; readonly parentID?: string }
  readonly callID?: string
}

/**
 * Follows `GET /events` for one session (and its subagents) until `signal` aborts, calling `onEvent` with each event's
 * type, and for `session.created` its data (a subagent's session, with the call that started it); reconnects after a
 * second when the stream ends (the server replays from `Last-Event-ID`).
 */
export const follow = (
  sessionID: string,
  onEvent: (type: string, data?: EventData) => void,
  signal: AbortSignal
): void => {
  let last: string | undefined
  const connect = async (): Promise<void> => {
    const current = token()
    if (current === null) return
    const response = await fetch(`/events?sessionID=${encodeURIComponent(sessionID)}`, {
      headers: { authorization: `Bearer ${current}`, ...(last ? { "last-event-id": last } : {}) },
      signal
    })
    if (!response.ok || response.body === null) return
    // Whatever happened before the stream was open (or while it was down) is read again once now.
    onEvent("connected")
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
    let buffer = ""
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      buffer += value
      let end = buffer.indexOf("\n\n")
      while (end !== -1) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        end = buffer.indexOf("\n\n")
        let type: string | undefined
        let data = ""
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) type = line.slice(6).trim()
          else if (line.startsWith("id:")) last = line.slice(3).trim()
          else if (line.startsWith("data:")) data += line.slice(5).trim()
        }
        if (type === "session.created" && data !== "") onEvent(type, JSON.parse(data) as EventData)
        else if (type !== undefined) onEvent(type)
      }
    }
  }
  const loop = async (): Promise<void> => {
    while (!signal.aborted) {
      await connect().catch(() => undefined)
      if (signal.aborted) return
      await new Promise((resolve) => setTimeout(resolve, 1_000))
    }
  }
  void loop()
}
