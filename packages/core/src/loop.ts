/**
 * @lathe/core/loop: the agent loop's inner services, for a test or an embedder that replaces one of them
 * (`loopLayer({ toolRunner: … })`, see `LoopLayers`) or reads one (`SystemPrompt.rules`). A front drives turns through
 * `TurnRunner` (the main entry); nothing here is needed to run one.
 */
export { Budget, BudgetExhausted, type BudgetLedger, BudgetUnpriced, estimateCost } from "./loop/budget.js"
export { Compaction } from "./loop/compaction.js"
export { type LoopLayers, loopLayer } from "./loop/loop-layer.js"
export { NestedRules } from "./loop/nested-rules.js"
export { Processor } from "./loop/processor.js"
export { Step } from "./loop/step.js"
export { SystemPrompt } from "./loop/system-prompt.js"
export { Title } from "./loop/title.js"
export { ToolRunner } from "./loop/tool-runner.js"
