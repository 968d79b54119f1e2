/**
 * `1234567` → `"1,234,567"`: a whole number with its digits grouped by three, as `toLocaleString("en-US")` writes it,
 * without Intl. The first Intl use of a process makes V8 build ICU's locale set (~100 M instructions), which a run
 * must not pay before its first request for the numbers of a notice. A number that is not a safe integer (a fraction,
 * `Infinity`, `NaN`) is left to `toLocaleString("en-US")`, so the text is the same for every input.
 */
export const groupDigits = (n: number): string => {
  if (!Number.isSafeInteger(n)) return n.toLocaleString("en-US")
  const digits = String(Math.abs(n))
  const grouped = digits.replace(/\B(?=(\d{3})+$)/g, ",")
  return n < 0 || Object.is(n, -0) ? `-${grouped}` : grouped
}
