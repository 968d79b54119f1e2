/** The AI SDK packages Lathe drives, and the config type of the descriptor that drives each. */
const DRIVEN: Readonly<Record<string, string>> = {
  "@ai-sdk/openai-compatible": "openai-compatible",
  "@ai-sdk/anthropic": "anthropic",
  "@ai-sdk/openai": "openai",
  "@ai-sdk/google": "google",
  "@ai-sdk/google-vertex": "google-vertex",
  "@ai-sdk/google-vertex/anthropic": "google-vertex-anthropic",
  "@ai-sdk/amazon-bedrock": "amazon-bedrock",
  "@ai-sdk/azure": "azure",
  "@ai-sdk/groq": "groq",
  "@ai-sdk/deepseek": "deepseek",
  "@ai-sdk/xai": "xai",
  "@ai-sdk/mistral": "mistral",
  "@ai-sdk/togetherai": "togetherai",
  "@ai-sdk/fireworks": "fireworks",
  "@ai-sdk/cerebras": "cerebras",
  "@openrouter/ai-sdk-provider": "openrouter"
}

/** The config type whose descriptor drives AI SDK package `npm`, or `undefined` when Lathe cannot drive it. */
export const drivenBy = (npm: string): string | undefined => (Object.hasOwn(DRIVEN, npm) ? DRIVEN[npm] : undefined)
