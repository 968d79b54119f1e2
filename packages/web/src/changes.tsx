import { useEffect, useMemo, useState } from "preact/hooks"
import { api } from "./api.js"
import { Diff } from "./diff.js"
import { diffRanges, type Message } from "./model.js"

/**
 * The file view: the session's whole diff (from before its first step to the work tree now), or, chosen in a select,
 * one turn's or one step's, between two snapshots the session recorded (asked of `GET /sessions/:id/diff?from&to`).
 */
export const Changes = (props: {
  readonly id: string
  readonly messages: ReadonlyArray<Message>
  readonly whole: string
  readonly onError: (error: unknown) => void
}) => {
  const ranges = useMemo(() => diffRanges(props.messages), [props.messages])
  const [chosen, setChosen] = useState("")
  // The diff shown and the choice it belongs to: the last one stays up while the next loads (the view keeps its mode).
  const [shown, setShown] = useState({ key: "", diff: props.whole })
  const range = ranges.find((r) => `${r.from}..${r.to}` === chosen)
  useEffect(() => {
    if (range === undefined) return setShown({ key: "", diff: props.whole })
    let live = true
    const key = `${range.from}..${range.to}`
    const query = `from=${encodeURIComponent(range.from)}&to=${encodeURIComponent(range.to)}`
    api<{ diff: string }>(`/sessions/${encodeURIComponent(props.id)}/diff?${query}`)
      .then((answer) => live && setShown({ key, diff: answer.diff }))
      .catch(props.onError)
    return () => {
      live = false
    }
  }, [props.id, props.whole, range?.from, range?.to])
  return (
    <>
      <div class="diff-range">
        <label for="diff-range">Show the changes of</label>
        <select id="diff-range" value={chosen} onChange={(e) => setChosen(e.currentTarget.value)}>
          <option value="">the whole session</option>
          {ranges.map((r) => (
            <option key={`${r.label}`} value={`${r.from}..${r.to}`}>
              {r.label.toLowerCase()}
            </option>
          ))}
        </select>
      </div>
      <p aria-live="polite" class="diff-status" data-shown={shown.key}>
        {shown.key === (range === undefined ? "" : chosen) ? "" : "Loading…"}
      </p>
      <Diff diff={shown.diff} />
    </>
  )
}
