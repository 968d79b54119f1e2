import "uplot/dist/uPlot.min.css"
import "./app.css"
import { render } from "preact"
import { useCallback, useEffect, useMemo, useState } from "preact/hooks"
import { adoptTokenFromUrl, api, follow, NeedToken, setToken } from "./api.js"
import { Changes } from "./changes.js"
import { StepCharts } from "./charts.js"
import {
  formatCost,
  formatCount,
  formatMs,
  type Message,
  type PendingPermission,
  type PendingQuestion,
  type SessionInfo,
  type Summary,
  stepsOf,
  toolTimes,
  totalTokens
} from "./model.js"
import { Timeline } from "./timeline.js"

/** The page's route, from the fragment: `#/` the list, `#/s/<id>` one session. */
const route = (): { readonly session?: string } => {
  const match = /^#\/s\/([^/?#]+)/.exec(location.hash)
  return match?.[1] ? { session: decodeURIComponent(match[1]) } : {}
}

/** Asks for the token; nothing else of the server is shown until it is accepted. */
const TokenPage = ({ refused, onToken }: { readonly refused: boolean; readonly onToken: () => void }) => {
  const [value, setValue] = useState("")
  return (
    <main id="main" tabIndex={-1} class="token-page">
      <h1>Lathe</h1>
      <form
        aria-label="Server token"
        onSubmit={(event) => {
          event.preventDefault()
          setToken(value.trim())
          onToken()
        }}
      >
        <p>
          This page shows the sessions of a <code>lathe web</code> server. Paste the token it printed (the part of its{" "}
          <code>open</code> URL after <code>#token=</code>).
        </p>
        {refused ? (
          <p role="alert" class="error">
            The server refused that token.
          </p>
        ) : null}
        <label for="token">Token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="off"
          required
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
        />
        <button type="submit">Open</button>
      </form>
    </main>
  )
}

/** The project's sessions with their totals, newest first; a search box filters them by title. */
const SessionList = ({ onError }: { readonly onError: (error: unknown) => void }) => {
  const [sessions, setSessions] = useState<ReadonlyArray<SessionInfo & { summary: Summary }> | undefined>()
  const [next, setNext] = useState<number | undefined>()
  const [query, setQuery] = useState("")
  /** A page of sessions with their totals, which the server computes in one store query. */
  const page = async (offset: number) => {
    const answer = await api<{
      sessions: ReadonlyArray<{ session: SessionInfo; summary: Summary }>
      next?: number
    }>(`/sessions/summaries?limit=100&offset=${offset}`)
    const rows = answer.sessions.map((s) => ({ ...s.session, summary: s.summary }))
    setSessions((before) => (offset === 0 ? rows : [...(before ?? []), ...rows]))
    setNext(answer.next)
  }
  useEffect(() => {
    page(0).catch(onError)
  }, [])
  const shown = (sessions ?? []).filter((s) => s.title.toLowerCase().includes(query.toLowerCase()))
  return (
    <main id="main" tabIndex={-1}>
      <h1>Sessions</h1>
      <div class="search">
        <label for="search">Search titles</label>
        <input id="search" type="search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
      </div>
      {sessions === undefined ? (
        <p aria-live="polite">Loading…</p>
      ) : shown.length === 0 ? (
        <p>No session{query ? " matches" : " yet"}.</p>
      ) : (
        <table class="sessions">
          <caption class="visually-hidden">Sessions of this project</caption>
          <thead>
            <tr>
              <th scope="col">Title</th>
              <th scope="col">Updated</th>
              <th scope="col">Agent</th>
              <th scope="col">Model</th>
              <th scope="col">Steps</th>
              <th scope="col">Tokens</th>
              <th scope="col">Cost</th>
              <th scope="col">Files changed</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((s) => (
              <tr key={s.id} data-session={s.id}>
                <th scope="row">
                  <a href={`#/s/${encodeURIComponent(s.id)}`}>{s.title || s.id}</a>
                  {s.parentID ? <span class="tag">subagent</span> : null}
                  {s.status !== "idle" ? <span class="tag live">{s.status}</span> : null}
                </th>
                <td>{new Date(s.time.updated).toLocaleString()}</td>
                <td>{s.summary.agent ?? s.agent ?? ""}</td>
                <td>{s.summary.model || s.model || ""}</td>
                <td>{s.summary.steps}</td>
                <td>{formatCount(totalTokens(s.summary.tokens))}</td>
                <td>{formatCost(s.summary.cost)}</td>
                <td>{s.summary.files}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next !== undefined ? (
        <button type="button" onClick={() => page(next).catch(onError)}>
          More sessions
        </button>
      ) : null}
    </main>
  )
}

/** The permission asks and questions of the session that wait for the person; each answer goes through the API. */
const Asks = (props: {
  readonly permissions: ReadonlyArray<PendingPermission>
  readonly questions: ReadonlyArray<PendingQuestion>
  readonly act: (run: () => Promise<unknown>) => void
}) => {
  if (props.permissions.length === 0 && props.questions.length === 0) return null
  return (
    <section class="asks" aria-labelledby="asks-title">
      <h2 id="asks-title">Waiting for you</h2>
      {props.permissions.map((p) => (
        <fieldset class="ask" key={p.id}>
          <legend>
            Allow <strong>{p.permission}</strong> {p.patterns.join(", ")}?
          </legend>
          {(["once", "always", "reject"] as const).map((reply) => (
            <button
              type="button"
              key={reply}
              onClick={() => props.act(() => api(`/permissions/${p.id}/reply`, { reply }))}
            >
              {reply === "once" ? "Allow once" : reply === "always" ? "Always allow" : "Reject"}
            </button>
          ))}
        </fieldset>
      ))}
      {props.questions.map((q) =>
        q.questions.map((item, i) => (
          <fieldset class="ask" key={`${q.id}-${i}`}>
            <legend>{item.question}</legend>
            {item.options.map((option) => (
              <button
                type="button"
                key={option.label}
                onClick={() =>
                  props.act(() =>
                    api(`/questions/${q.id}/reply`, {
                      answers: q.questions.map((_, j) => (j === i ? [option.label] : []))
                    })
                  )
                }
              >
                {option.label}
              </button>
            ))}
            <button
              type="button"
              onClick={() =>
                props.act(() => api(`/questions/${q.id}/reply`, { dismissed: "Dismissed from the web page." }))
              }
            >
              Dismiss
            </button>
          </fieldset>
        ))
      )}
    </section>
  )
}

/** One session: actions, what waits for an answer, the charts, the timeline, the diff; live while it runs. */
const SessionPage = ({ id, onError }: { readonly id: string; readonly onError: (error: unknown) => void }) => {
  const [session, setSession] = useState<SessionInfo | undefined>()
  const [messages, setMessages] = useState<ReadonlyArray<Message>>([])
  const [permissions, setPermissions] = useState<ReadonlyArray<PendingPermission>>([])
  const [questions, setQuestions] = useState<ReadonlyArray<PendingQuestion>>([])
  const [diff, setDiff] = useState("")
  const [prompt, setPrompt] = useState("")
  const [notice, setNotice] = useState("")
  // Subagent sessions by the call that started them, from the event stream: a running task call's child is known
  // before the call completes (its metadata names it only then).
  const [subagents, setSubagents] = useState<Readonly<Record<string, string>>>({})
  const load = useCallback(async () => {
    const [info, list, asked, questioned, changes] = await Promise.all([
      api<SessionInfo>(`/sessions/${id}`),
      api<ReadonlyArray<Message>>(`/sessions/${id}/messages`),
      api<ReadonlyArray<PendingPermission>>("/permissions"),
      api<ReadonlyArray<PendingQuestion>>("/questions"),
      api<{ diff: string }>(`/sessions/${id}/diff`).catch(() => ({ diff: "" }))
    ])
    setSession(info)
    setMessages(list)
    setPermissions(asked.filter((p) => p.sessionID === id))
    setQuestions(questioned.filter((q) => q.sessionID === id))
    setDiff(changes.diff)
  }, [id])
  useEffect(() => {
    const abort = new AbortController()
    let timer: ReturnType<typeof setTimeout> | undefined
    const reload = () => {
      // Events come in bursts (a text delta each); one reload per burst.
      timer ??= setTimeout(() => {
        timer = undefined
        load().catch(onError)
      }, 150)
    }
    load().catch(onError)
    follow(
      id,
      (type, data) => {
        const child = data?.session
        if (type === "session.created" && child?.parentID && data?.callID) {
          const callID = data.callID
          setSubagents((known) => ({ ...known, [callID]: child.id }))
        }
        reload()
      },
      abort.signal
    )
    return () => {
      abort.abort()
      if (timer) clearTimeout(timer)
    }
  }, [id])
  const act = (run: () => Promise<unknown>) => {
    setNotice("")
    run()
      .then(() => load())
      .catch((error: unknown) =>
        error instanceof NeedToken ? onError(error) : setNotice(String((error as Error).message ?? error))
      )
  }
  const steps = useMemo(() => stepsOf(messages), [messages])
  const perTool = useMemo(() => toolTimes(messages), [messages])
  const longest = Math.max(1, ...perTool.map((t) => t.ms))
  const busy = session?.status !== undefined && session.status !== "idle"
  return (
    <main id="main" tabIndex={-1}>
      <h1>{session?.title || id}</h1>
      <p class="status-line" aria-live="polite">
        {session ? (busy ? `Running (${session.status})` : "Idle") : "Loading…"}
        {session?.parentID ? (
          <>
            {" · "}
            <a href={`#/s/${encodeURIComponent(session.parentID)}`}>parent session</a>
          </>
        ) : null}
      </p>
      <Asks permissions={permissions} questions={questions} act={act} />
      <section aria-labelledby="act-title" class="act">
        <h2 id="act-title">Act</h2>
        <form
          onSubmit={(event) => {
            event.preventDefault()
            const text = prompt.trim()
            if (text === "") return
            setPrompt("")
            act(() => api(`/sessions/${id}/prompt`, { text }))
          }}
        >
          <label for="prompt">Prompt</label>
          <textarea id="prompt" rows={2} value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)} />
          <button type="submit">Send</button>
          <button type="button" disabled={!busy} onClick={() => act(() => api(`/sessions/${id}/abort`, {}))}>
            Abort
          </button>
          <button type="button" disabled={busy} onClick={() => act(() => api(`/sessions/${id}/undo`, {}))}>
            Undo turn
          </button>
          <button type="button" disabled={busy} onClick={() => act(() => api(`/sessions/${id}/redo`, {}))}>
            Redo turn
          </button>
        </form>
        {notice ? (
          <p role="alert" class="error">
            {notice}
          </p>
        ) : null}
      </section>
      <section aria-labelledby="charts-title">
        <h2 id="charts-title">Steps</h2>
        <StepCharts steps={steps} />
        {perTool.length > 0 ? (
          <figure class="tool-times" aria-labelledby="tool-times-title">
            <figcaption id="tool-times-title">Time per tool</figcaption>
            <ul>
              {perTool.map((t) => (
                <li key={t.tool}>
                  <span class="tool-name">{t.tool}</span>
                  <span class="bar" style={{ width: `${Math.max(1, (t.ms / longest) * 100)}%` }} />
                  <span>
                    {formatMs(t.ms)} · {t.calls} call{t.calls === 1 ? "" : "s"}
                  </span>
                </li>
              ))}
            </ul>
          </figure>
        ) : null}
      </section>
      <section aria-labelledby="timeline-title">
        <h2 id="timeline-title">Timeline</h2>
        <Timeline messages={messages} tick={messages} subagents={subagents} />
      </section>
      <section aria-labelledby="diff-title">
        <h2 id="diff-title">Changes</h2>
        <Changes id={id} messages={messages} whole={diff} onError={onError} />
      </section>
    </main>
  )
}

const App = () => {
  const [where, setWhere] = useState(route())
  const [needToken, setNeedToken] = useState<NeedToken | undefined>(() =>
    sessionStorage.getItem("lathe.token") ? undefined : new NeedToken(false)
  )
  const [failure, setFailure] = useState("")
  const [attempt, setAttempt] = useState(0)
  useEffect(() => {
    const onHash = () => setWhere(route())
    addEventListener("hashchange", onHash)
    return () => removeEventListener("hashchange", onHash)
  }, [])
  const onError = useCallback((error: unknown) => {
    if (error instanceof NeedToken) setNeedToken(error)
    else setFailure(error instanceof Error ? error.message : String(error))
  }, [])
  if (needToken)
    return (
      <TokenPage
        refused={needToken.refused}
        onToken={() => {
          setNeedToken(undefined)
          setAttempt(attempt + 1)
        }}
      />
    )
  return (
    <>
      <header>
        <nav aria-label="Main">
          <a href="#/">Lathe · sessions</a>
        </nav>
      </header>
      {failure ? (
        <p role="alert" class="error">
          {failure}
        </p>
      ) : null}
      {where.session ? (
        <SessionPage key={`${where.session}-${attempt}`} id={where.session} onError={onError} />
      ) : (
        <SessionList key={attempt} onError={onError} />
      )}
    </>
  )
}

adoptTokenFromUrl()
const root = document.getElementById("root")
if (root) render(<App />, root)
