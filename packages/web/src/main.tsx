import "uplot/dist/uPlot.min.css"
import "./app.css"
import { render } from "preact"
import { useCallback, useEffect, useMemo, useState } from "preact/hooks"
import { adoptTokenFromUrl, api, follow, NeedToken, setToken } from "./api.js"
import { StepCharts } from "./charts.js"
import { Diff } from "./diff.js"
import { Markdown } from "./markdown.js"
import {
  formatCost,
  formatCount,
  formatMs,
  type Message,
  type Part,
  type PendingPermission,
  type PendingQuestion,
  type SessionInfo,
  type Summary,
  stepsOf,
  summarize,
  toolTimes
} from "./model.js"

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
  const [sessions, setSessions] = useState<ReadonlyArray<SessionInfo & { summary?: Summary }> | undefined>()
  const [query, setQuery] = useState("")
  useEffect(() => {
    let live = true
    const load = async () => {
      const list = await api<ReadonlyArray<SessionInfo>>("/sessions?limit=100")
      if (live) setSessions(list)
      const summarized = await Promise.all(
        list.map(async (s) => ({
          ...s,
          summary: summarize(await api<ReadonlyArray<Message>>(`/sessions/${s.id}/messages`))
        }))
      )
      if (live) setSessions(summarized)
    }
    load().catch(onError)
    return () => {
      live = false
    }
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
                <td>{s.summary?.agent ?? ""}</td>
                <td>{s.summary?.model || s.model || ""}</td>
                <td>{s.summary?.steps ?? ""}</td>
                <td>{s.summary ? formatCount(s.summary.tokens) : ""}</td>
                <td>{s.summary ? formatCost(s.summary.cost) : ""}</td>
                <td>{s.summary?.files.length ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  )
}

const duration = (part: Extract<Part, { type: "tool" }>): string => {
  const time = part.state.time
  return time?.end === undefined ? "" : formatMs(time.end - time.start)
}

/** One part of a message in the timeline. */
const PartView = ({ part }: { readonly part: Part }) => {
  switch (part.type) {
    case "text":
      return part.synthetic ? null : <Markdown text={part.text} />
    case "reasoning":
      return (
        <details class="reasoning">
          <summary>Reasoning</summary>
          <Markdown text={part.text} />
        </details>
      )
    case "tool":
      return (
        <details class={`tool ${part.state.status}`} open data-tool={part.tool}>
          <summary>
            <span class="tool-name">{part.tool}</span> {part.state.title ?? ""}{" "}
            <span class="status">{part.state.status}</span> <span class="duration">{duration(part)}</span>
          </summary>
          <h4>Input</h4>
          <pre class="tool-input">{JSON.stringify(part.state.input, null, 2)}</pre>
          {part.state.output !== undefined ? (
            <>
              <h4>Output</h4>
              <pre class="tool-output">{part.state.output}</pre>
            </>
          ) : null}
          {part.state.error !== undefined ? <pre class="tool-output error">{part.state.error}</pre> : null}
        </details>
      )
    case "step-finish":
      return (
        <p class="step-end">
          step: {part.tokens.input} in · {part.tokens.cache.read} cached · {part.tokens.output} out
          {part.tokens.reasoning ? ` · ${part.tokens.reasoning} reasoning` : ""} · {formatCost(part.cost)}
        </p>
      )
    case "patch":
      return <p class="marker">changed {part.files.join(", ")}</p>
    case "subtask":
      return (
        <p class="marker subtask">
          subagent {part.agent}: {part.description}{" "}
          {part.childSessionID ? <a href={`#/s/${encodeURIComponent(part.childSessionID)}`}>open its session</a> : null}
        </p>
      )
    case "compaction":
      return <p class="marker compaction">— compacted here{part.auto ? " (automatically)" : ""} —</p>
    case "retry":
      return (
        <p class="marker retry">
          retry {part.attempt}: {part.message}
        </p>
      )
    default:
      return null
  }
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
    follow(id, reload, abort.signal)
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
        <ol class="timeline">
          {messages.map((m) => (
            <li key={m.info.id} class={`message ${m.info.role}`} data-message={m.info.id}>
              <h3>
                {m.info.role === "user"
                  ? "Prompt"
                  : `${m.info.agent ?? "agent"}${m.info.model ? ` · ${m.info.model.modelID}` : ""}${m.info.summary ? " · compaction summary" : ""}`}{" "}
                <time dateTime={new Date(m.info.time.created).toISOString()}>
                  {new Date(m.info.time.created).toLocaleTimeString()}
                </time>
              </h3>
              {m.parts.map((part) => (
                <PartView key={part.id} part={part} />
              ))}
              {m.info.error ? (
                <p class="error">
                  {m.info.error.name}
                  {m.info.error.message ? `: ${m.info.error.message}` : ""}
                </p>
              ) : null}
            </li>
          ))}
        </ol>
      </section>
      <section aria-labelledby="diff-title">
        <h2 id="diff-title">Changes</h2>
        <Diff diff={diff} />
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
