import { useEffect, useRef } from "preact/hooks"
import uPlot from "uplot"
import { formatCost, formatMs, type Step } from "./model.js"

/** One stacked layer of a bar chart: its label, colour and value per step (uPlot draws later layers in front). */
interface Layer {
  readonly label: string
  readonly stroke: string
  readonly values: ReadonlyArray<number>
}

const bars = uPlot.paths.bars?.({ size: [0.7, 48] })

/**
 * A bar per step, layers stacked (each layer is drawn as the running sum, tallest first, so the visible band of
 * each is its own share), optionally with a line on a second axis. The canvas is for the eye; the table under it
 * holds the same numbers, one row per step, for screen readers and for tests.
 */
const StepChart = (props: {
  readonly id: string
  readonly title: string
  readonly steps: ReadonlyArray<Step>
  readonly layers: ReadonlyArray<Layer>
  readonly unit: (value: number) => string
  readonly line?: Layer
}) => {
  const box = useRef<HTMLDivElement>(null)
  const { steps, layers, line } = props
  useEffect(() => {
    const el = box.current
    if (el === null || steps.length === 0) return
    const x = steps.map((s) => s.index)
    const sums = layers.map((_, i) =>
      steps.map((__, s) => layers.slice(0, i + 1).reduce((t, l) => t + (l.values[s] ?? 0), 0))
    )
    const order = layers.map((_, i) => i).reverse()
    const chart = new uPlot(
      {
        width: Math.max(320, Math.min(el.clientWidth || 720, 960)),
        height: 220,
        // Bars stand on zero: an axis starting near the smallest value would make a small step look empty.
        scales: {
          x: { time: false, range: [0.5, steps.length + 0.5] },
          y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
          ...(line ? { line: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 0.01] } } : {})
        },
        legend: { live: false },
        axes: [
          { label: "step", incrs: [1, 2, 5, 10, 20, 50, 100] },
          { values: (_u, ticks) => ticks.map(props.unit), size: 70 },
          ...(line
            ? [
                {
                  scale: "line",
                  side: 1 as const,
                  values: (_u: uPlot, t: Array<number>) => t.map(formatCost),
                  size: 70
                }
              ]
            : [])
        ],
        series: [
          {},
          ...order.map((i) => ({
            label: layers[i]?.label ?? "",
            fill: layers[i]?.stroke ?? "",
            stroke: layers[i]?.stroke ?? "",
            ...(bars ? { paths: bars } : {}),
            points: { show: false }
          })),
          ...(line ? [{ label: line.label, stroke: line.stroke, width: 2, scale: "line" }] : [])
        ]
      },
      [x, ...order.map((i) => sums[i] ?? []), ...(line ? [[...line.values]] : [])],
      el
    )
    return () => chart.destroy()
  }, [steps, layers, line])
  return (
    <figure class="chart" id={props.id} aria-labelledby={`${props.id}-title`}>
      <figcaption id={`${props.id}-title`}>{props.title}</figcaption>
      <div ref={box} class="chart-canvas" aria-hidden="true" />
      <table class="visually-hidden" data-chart={props.id}>
        <caption>{props.title}, per step</caption>
        <thead>
          <tr>
            <th scope="col">Step</th>
            {layers.map((l) => (
              <th scope="col" key={l.label}>
                {l.label}
              </th>
            ))}
            {line ? <th scope="col">{line.label}</th> : null}
          </tr>
        </thead>
        <tbody>
          {steps.map((s, i) => (
            <tr key={s.index} data-step={s.index}>
              <th scope="row">{s.index}</th>
              {layers.map((l) => (
                <td key={l.label}>{props.unit(l.values[i] ?? 0)}</td>
              ))}
              {line ? <td>{formatCost(line.values[i] ?? 0)}</td> : null}
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  )
}

/** The session's two pictures: time per step (model vs tools), tokens per step with the cumulative cost. */
export const StepCharts = ({ steps }: { readonly steps: ReadonlyArray<Step> }) => {
  if (steps.length === 0) return <p>No finished step yet.</p>
  let running = 0
  const cumulative = steps.map((s) => {
    running += s.cost
    return running
  })
  return (
    <div class="charts">
      <StepChart
        id="chart-time"
        title="Time per step"
        steps={steps}
        unit={formatMs}
        layers={[
          { label: "model", stroke: "#4c78a8", values: steps.map((s) => Math.max(0, s.ms - s.toolMs)) },
          { label: "tools", stroke: "#f58518", values: steps.map((s) => s.toolMs) }
        ]}
      />
      <StepChart
        id="chart-tokens"
        title="Tokens per step"
        steps={steps}
        unit={(n) => String(Math.round(n))}
        layers={[
          { label: "input", stroke: "#4c78a8", values: steps.map((s) => s.tokens.input) },
          { label: "cached", stroke: "#72b7b2", values: steps.map((s) => s.tokens.cache.read) },
          { label: "output", stroke: "#54a24b", values: steps.map((s) => s.tokens.output) },
          { label: "reasoning", stroke: "#b279a2", values: steps.map((s) => s.tokens.reasoning) }
        ]}
        line={{ label: "cost so far", stroke: "#e45756", values: cumulative }}
      />
    </div>
  )
}
