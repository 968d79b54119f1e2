#!/usr/bin/env node
// The `lathe` executable. Kept tiny: the compile cache makes the second start fast, and commands load lazily.
// Its first line caps the young generation (see young-heap.ts); everything else is imported after it, dynamically,
// because a module imported statically would be evaluated (and would allocate) before that line ran.
import { capYoungHeap } from "./young-heap.js"

const youngHeap = capYoungHeap(process.env, process.execArgv)
const { launch } = await import("./launch.js")
await launch(youngHeap.settle)
