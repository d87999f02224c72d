// What a call threw, for suites that assert on error codes.

/** The `code` of what `fn` throws synchronously; "no error" when it returns. */
export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return "no error";
}
