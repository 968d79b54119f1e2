/**
 * @lathe/core/providers: the provider table and the keys `lathe auth login` stored, for the commands that list and
 * set up providers (`lathe models`, `lathe auth`, `/connect`, `lathe doctor`). The `LLM` service and the providers a
 * run has set up (`configuredProviders`) are the main entry's.
 */
export {
  authFile,
  credentialStore,
  readAuthFile,
  removeKey,
  storedKeys,
  storeKey,
  storeSignIn
} from "./config/auth-store.js"
export {
  accountIdOf,
  authorizeURL,
  chatgptEndpoints,
  exchangeCode,
  pkcePair,
  refreshChatGPT
} from "./provider/chatgpt.js"
export { closeMatches } from "./provider/close-match.js"
export type { DiscoveredModel, ProviderDescriptor, ProviderSettings } from "./provider/descriptor.js"
export {
  copilotEndpoints,
  type DeviceCode,
  exchangeCopilotToken,
  pollDeviceToken,
  requestDeviceCode
} from "./provider/github-copilot.js"
export { ReasoningLevel } from "./provider/reasoning.js"
export { descriptorFor, descriptorOf, PROVIDER_TYPES, PROVIDERS } from "./provider/registry.js"
export { type SignInCredential, SignInError } from "./provider/sign-in.js"
