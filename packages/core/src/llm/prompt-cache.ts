import type { SharedV4ProviderOptions } from "@ai-sdk/provider"
import type { ModelMessage, SystemModelMessage, ToolSet } from "ai"
import type { ProviderOptions } from "../provider/descriptor.js"

/** What one request sends before its options: instructions, messages and tools, as the ai SDK takes them. */
export interface CachePrompt {
  readonly instructions: ReadonlyArray<SystemModelMessage>
  readonly messages: ReadonlyArray<ModelMessage>
  readonly tools: ToolSet | undefined
}

/** The most cache breakpoints Anthropic takes in one request. */
const MAX_BREAKPOINTS = 4

const withOptions = <T extends { readonly providerOptions?: SharedV4ProviderOptions | undefined }>(
  item: T,
  mark: ProviderOptions
): T => {
  const merged: Record<string, Record<string, unknown>> = { ...item.providerOptions }
  for (const [name, options] of Object.entries(mark)) merged[name] = { ...merged[name], ...options }
  return { ...item, providerOptions: merged as SharedV4ProviderOptions }
}

/**
 * Marks prompt-cache breakpoints on one request, for providers that take explicit breakpoints (Anthropic-family
 * models: direct, Bedrock, Vertex): `mark` (the provider options of one breakpoint, such as
 * `{ anthropic: { cacheControl: { type: "ephemeral" } } }`) is merged into the last tool, the last system message,
 * and the last two messages that are not system messages — at most four, Anthropic's limit. Each mark caches
 * everything before it, so the tools and system prompt are read from the cache on every step, the previous step's
 * history too, and the new step's tail is written for the next one.
 */
export const markCache = (prompt: CachePrompt, mark: ProviderOptions): CachePrompt => {
  let left = MAX_BREAKPOINTS
  let tools = prompt.tools
  const toolNames = tools ? Object.keys(tools) : []
  const lastTool = toolNames.at(-1)
  if (tools && lastTool !== undefined) {
    const marked = tools[lastTool]
    if (marked !== undefined) tools = { ...tools, [lastTool]: withOptions(marked, mark) }
    left--
  }
  const instructions = [...prompt.instructions]
  const lastSystem = instructions.length - 1
  if (lastSystem >= 0) {
    const system = instructions[lastSystem]
    if (system !== undefined) instructions[lastSystem] = withOptions(system, mark)
    left--
  }
  const messages = [...prompt.messages]
  for (let i = messages.length - 1, marked = 0; i >= 0 && marked < 2 && left > 0; i--) {
    const message = messages[i]
    if (message === undefined || message.role === "system") continue
    messages[i] = withOptions(message, mark)
    marked++
    left--
  }
  return { instructions, messages, tools }
}

/**
 * `markCache` with Anthropic's breakpoint mark under the SDK's provider-options key `optionsName` (`anthropic`).
 */
export const markAnthropicCache = (prompt: CachePrompt, optionsName = "anthropic"): CachePrompt =>
  markCache(prompt, { [optionsName]: { cacheControl: { type: "ephemeral" } } })

/** Provider options that key OpenAI's prompt cache to one session, so its steps land on the same cache. */
export const openAICacheKey = (sessionID: string): SharedV4ProviderOptions => ({
  openai: { promptCacheKey: sessionID }
})
