import type { ProviderSettings } from "./descriptor.js"

/**
 * The settings every ai SDK provider factory takes, from one provider's `settings`: Lathe's fetch, the key, the base
 * URL and headers when set, then config `options` (which win: a provider's own `fetch` option replaces Lathe's).
 */
export const sdkSettings = (settings: ProviderSettings): Record<string, unknown> => ({
  fetch: settings.fetch,
  ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
  ...(settings.baseURL ? { baseURL: settings.baseURL } : {}),
  ...(settings.headers ? { headers: { ...settings.headers } } : {}),
  ...settings.options
})
