// The AI SDK's prompt conversion, once per message: see `memoizedPromptConversion`.

/** What the patch replaces in the `ai` package's dist/index.js (inside `convertToLanguageModelPrompt`). */
const FROM =
  "...prompt.messages.map((message) => convertToLanguageModelMessage({\n" +
  "\t\tmessage,\n" +
  "\t\tdownloadedAssets,\n" +
  "\t\tprovider\n" +
  "\t}))];"

const TO = "...__latheConvertMessages(prompt.messages, downloadedAssets, provider)];"

/**
 * Converts each message through the SDK's own `convertToLanguageModelMessage`, once: the result is kept for the
 * message object (and the provider it was made for) and handed out again while the same object comes back. Lathe
 * builds a step's history from message objects it keeps (`toModelMessages`), so a step converts only its new messages.
 * Not kept, and converted as before: a prompt with downloaded assets (URL parts the model cannot take: the result
 * depends on them), and every message of a prompt with two tool messages in a row (the SDK merges them by changing the
 * first one's result in place).
 */
const HELPER = `
var __latheConverted = new WeakMap();
function __latheConvertMessages(messages, downloadedAssets, provider) {
	let keep = true;
	for (const _ in downloadedAssets) keep = false;
	for (let i = 1; keep && i < messages.length; i++) if (messages[i].role === "tool" && messages[i - 1].role === "tool") keep = false;
	return messages.map((message) => {
		if (!keep) return convertToLanguageModelMessage({ message, downloadedAssets, provider });
		const held = __latheConverted.get(message);
		if (held !== void 0 && held.provider === provider) return held.converted;
		const converted = convertToLanguageModelMessage({ message, downloadedAssets, provider });
		__latheConverted.set(message, { provider, converted });
		return converted;
	});
}
`

/**
 * `source` (the `ai` package's dist/index.js) with its prompt conversion kept per message object. Each model call
 * converted the whole history again (`convertToLanguageModelPrompt`: a new object for every message and part): at 200
 * steps, a fifth of everything a session allocated. Throws if the SDK's code changed, rather than bundle an unpatched
 * copy silently.
 */
export const memoizedPromptConversion = (source) => {
  if (source.split(FROM).length !== 2)
    throw new Error(
      "ai/dist/index.js: expected one `prompt.messages.map(… convertToLanguageModelMessage …)`; the AI SDK changed, update scripts/prompt-memo.mjs"
    )
  return source.replace(FROM, TO) + HELPER
}
