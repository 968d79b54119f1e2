import v8 from "node:v8"

/**
 * The size (MiB, V8's `new_space` as `v8.getHeapSpaceStatistics()` reports it) Lathe lets the young generation reach.
 * V8's default grows it to 64 MiB and more in a long session although what lives barely grows: the extra memory is
 * only room between scavenges. 16 MiB is what `node --max-semi-space-size=8` gives.
 */
const YOUNG_HEAP_MIB = 16

/** Node and V8 options through which a person sizes the young generation themselves; Lathe then leaves it alone. */
const OWN_SIZING =
  /--(max-semi-space-size|min-semi-space-size|semi-space-growth-factor|max-heap-size|scavenger-max-new-space-capacity-mb)\b/

/** The young generation's size now, in bytes. */
const youngHeapBytes = (): number =>
  v8.getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.space_size ?? 0

/**
 * Caps the young generation at `YOUNG_HEAP_MIB` from inside the process, for every way of starting Lathe (the
 * published launcher, the single executable, the sources). The limit V8 offers for this, `--max-semi-space-size`,
 * is read only when the isolate is created (set later it changes nothing); what V8 reads at each of its growth
 * decisions is the growth factor. So: call this first thing, before Lathe's modules load, and it sets the factor
 * that takes the young generation to the cap at its second growth (both come early in start-up: nearly everything
 * start-up allocates survives); call `settle()` at the end of start-up, before any command runs, and it sets the
 * factor to 1, so the young generation stays where it is (the cap, or less if start-up never grew it that far).
 *
 * The factor is fixed at the same two points of every start, so V8's flag hash (part of every code cache's check) is
 * the same when a code cache is read and when it is written. Opt-in: on only with `LATHE_NODE_HEAP=small` (a smaller
 * young generation makes start-up scavenge more: `bench/loop.ts` measured the first request ×1.20–1.25 later on a quiet
 * machine, ×1.08 with a 32 MiB cap), and off (both a no-op) otherwise, or
 * when `execArgv` or `NODE_OPTIONS` already sizes the young generation.
 */
export const capYoungHeap = (
  env: NodeJS.ProcessEnv,
  execArgv: ReadonlyArray<string>
): { readonly settle: () => void } => {
  const off = { settle: () => {} }
  if (env.LATHE_NODE_HEAP !== "small") return off
  const own = [...execArgv, ...(env.NODE_OPTIONS ?? "").split(/\s+/)].some((arg) =>
    OWN_SIZING.test(arg.replaceAll("_", "-"))
  )
  if (own) return off
  const initial = youngHeapBytes()
  if (initial <= 0) return off
  // V8's first growth doubles the initial space whatever the factor says; the factor applies from the second one.
  const factor = Math.max(2, Math.round((YOUNG_HEAP_MIB * 1024 * 1024) / (2 * initial)))
  v8.setFlagsFromString(`--semi-space-growth-factor=${factor}`)
  return { settle: () => v8.setFlagsFromString("--semi-space-growth-factor=1") }
}
