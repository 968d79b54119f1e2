import type * as V8 from "node:v8"

/**
 * The size (MiB, V8's `new_space` as `v8.getHeapSpaceStatistics()` reports it) Lathe lets the young generation reach
 * with `LATHE_NODE_HEAP=small`. V8's default grows it to 64 MiB and more in a long session although what lives barely
 * grows: the extra memory is only room between scavenges. 16 MiB is what `node --max-semi-space-size=8` gives.
 */
const YOUNG_HEAP_MIB = 16
const YOUNG_HEAP_BYTES = YOUNG_HEAP_MIB * 1024 * 1024

/**
 * The size the default hold stops the young generation at (`node --max-semi-space-size=4` gives it), from the run
 * build's load on. Held at 16 MiB from the first request only (as before), V8 doubled it to 16 MiB around that request,
 * and a session's first steps then allocated in memory never touched before: on a machine where a page's first touch
 * is dear (a virtual machine; ~16 µs a page on the 2-core one this was measured on) a 20-read session's median step
 * gap was 7.4 ms; stopped at 8 MiB during start-up, 4.9 ms, with the first request and an edit session's late steps
 * unchanged and ~7 MiB less peak memory (see docs/loop-performance.md).
 */
const HELD_YOUNG_HEAP_BYTES = 8 * 1024 * 1024

/** V8's default growth factor (`node --v8-options`), restored before Node or Lathe write a code cache at exit. */
const DEFAULT_FACTOR = 2

/** Node and V8 options through which a person sizes the young generation themselves; Lathe then leaves it alone. */
const OWN_SIZING =
  /--(max-semi-space-size|min-semi-space-size|semi-space-growth-factor|max-heap-size|scavenger-max-new-space-capacity-mb)\b/

/**
 * Node's `v8` module, loaded when first needed: loading it pulls in Node's streams, which `lathe --version` and the
 * other quick commands would pay for at every start; by the first model request they are loaded anyway.
 */
const v8 = (): typeof V8 => process.getBuiltinModule("node:v8")

/** The young generation's size now, in bytes. */
const youngHeapBytes = (): number =>
  v8()
    .getHeapSpaceStatistics()
    .find((space) => space.space_name === "new_space")?.space_size ?? 0

/**
 * The diagnostics channels on which Node announces an outgoing HTTP request: `node:http` (core's provider fetch) and
 * undici (`fetch`, used through a proxy). A model request is the first thing Lathe sends that way.
 */
const REQUEST_CHANNELS = ["http.client.request.start", "undici:request:create"]

/** The growth factor Lathe last set (V8's own until it sets one). */
let factor = DEFAULT_FACTOR

/**
 * The growth factor every code cache is read and written with: V8's own, or with `LATHE_NODE_HEAP=small` the one set
 * before the first cache is read. V8 records its flags' hash in each cache and rejects one whose hash is not the
 * current one (the factor is part of it): a cache read while the hold has the factor at 1 (a side package loaded after
 * the first request; with `small`, the run build itself, read after `settle()`) was compiled anew and written again at
 * every start.
 */
let cacheFactor = DEFAULT_FACTOR

let restoredAtExit = false

const setFactor = (next: number): void => {
  if (next === factor) return
  factor = next
  v8().setFlagsFromString(`--semi-space-growth-factor=${next}`)
  if (restoredAtExit) return
  restoredAtExit = true
  // Registered before the exit listeners of the code caches (`code-cache.ts`, Node's own compile cache is written
  // after every listener), so they are written with the factor they are read with.
  process.on("exit", () => setFactor(cacheFactor))
}

/**
 * Runs `use` (reading or writing a V8 code cache) with the growth factor the caches are read with, then sets back
 * the one Lathe holds: see `cacheFactor`.
 */
export const withCacheFlags = <A>(use: () => A): A => {
  const held = factor
  if (held === cacheFactor) return use()
  setFactor(cacheFactor)
  try {
    return use()
  } finally {
    setFactor(held)
  }
}

/**
 * Keeps the young generation near {@link HELD_YOUNG_HEAP_BYTES} from the run build's load on (`holdYoungHeap`, checked
 * while the run build loads and at each request): V8 grows it with its own factor (2) up to that size, then not
 * at all (factor 1); it may shrink it while the process waits, and then lets it grow back only as far as doubling
 * stays under the cap. Left alone, `lathe run` measured 16 MiB at its first request and 64 MiB some hundred steps
 * later. Since the run build's source became a string outside the heap (code-cache.ts; it was a 1.7–2 MB string the
 * young generation allocated and promoted), V8 alone stays at 8 MiB through a short session's start-up; a session
 * whose kept objects grow still makes it grow, which the hold stops (cli/test/young-heap.test.ts).
 *
 * The growth factor is part of V8's flag hash, which every code cache records and checks when read: a cache written
 * with the factor at 1 would be rejected (and written again) at every start. So the factor is set back to V8's default
 * at exit, before the caches Lathe (`code-cache.ts`) and Node write then, and `withCacheFlags` sets it back while a
 * cache is read.
 */
const holdFromStartUp = (): void => {
  // Not checked here: that loads `node:v8`, which `--version` and the other quick commands would pay for.
  holding = true
  const channels = process.getBuiltinModule("node:diagnostics_channel")
  let pending = false
  const onRequest = () => {
    if (pending) return
    pending = true
    // After the request's own synchronous work: nothing here delays it.
    setImmediate(() => {
      pending = false
      holdYoungHeap()
    })
  }
  for (const name of REQUEST_CHANNELS) channels.subscribe(name, onRequest)
}

/** Whether the default hold is armed (`holdFromStartUp`). */
let holding = false

/**
 * With the default hold armed, checks the young generation against {@link HELD_YOUNG_HEAP_BYTES}: V8 multiplies it
 * by the growth factor when it grows it, and the factor is a whole number, so it may double only while doubling stays
 * within the cap (V8 may also have shrunk it while the process waited), else it is held (factor 1). Called on the way
 * through the run build's load (code-cache.ts: after its cache is deserialised and after it ran) and after
 * each request; a growth between two checks lands at 16 MiB, where the hold stopped it before. Does nothing otherwise.
 */
export const holdYoungHeap = (): void => {
  if (!holding) return
  const size = youngHeapBytes()
  if (size <= 0) return
  setFactor(size * DEFAULT_FACTOR <= HELD_YOUNG_HEAP_BYTES ? DEFAULT_FACTOR : 1)
}

/**
 * Keeps the young generation near `YOUNG_HEAP_MIB` from inside the process, for every way of starting Lathe (the
 * published launcher, the single executable, the sources). The limit V8 offers for this, `--max-semi-space-size`,
 * is read only when the isolate is created (set later it changes nothing); what V8 reads at each of its growth
 * decisions is the growth factor.
 *
 * By default (and with `LATHE_NODE_HEAP=hold`) the factor is V8's own until the young generation reaches 8 MiB, then
 * held (see {@link holdFromStartUp}); `settle()` arms that. `LATHE_NODE_HEAP=small` caps it from the very start
 * instead: call this first thing, before Lathe's modules load, and it sets the factor that takes the young
 * generation to the cap at its second growth; `settle()`, at the end of start-up, sets it to 1. That costs start-up
 * (`bench/loop.ts` measured the first request ×1.20–1.25 later on a quiet machine). `LATHE_NODE_HEAP=default` leaves
 * V8 alone throughout, as does a young generation the person sized themselves (`execArgv` or `NODE_OPTIONS`).
 *
 * With `small` the factor is set before any code cache is read, and every code cache is read and written with that
 * factor (`withCacheFlags`, and at exit), so V8's flag hash (part of every code cache's check) is the same when a
 * cache is read and written.
 */
export const capYoungHeap = (
  env: NodeJS.ProcessEnv,
  execArgv: ReadonlyArray<string>
): { readonly settle: () => void } => {
  const off = { settle: () => {} }
  const mode = env.LATHE_NODE_HEAP
  if (mode === "default") return off
  const own = [...execArgv, ...(env.NODE_OPTIONS ?? "").split(/\s+/)].some((arg) =>
    OWN_SIZING.test(arg.replaceAll("_", "-"))
  )
  if (own) return off
  if (mode !== "small") return { settle: holdFromStartUp }
  const initial = youngHeapBytes()
  if (initial <= 0) return off
  // V8's first growth doubles the initial space whatever the factor says; the factor applies from the second one.
  // Set before any code cache is read: the caches are read and written with it (see `cacheFactor`).
  cacheFactor = Math.max(2, Math.round(YOUNG_HEAP_BYTES / (2 * initial)))
  setFactor(cacheFactor)
  return { settle: () => setFactor(1) }
}
