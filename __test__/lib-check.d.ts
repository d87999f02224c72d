// What the type-check of lib/ (tsconfig.lib.json) assumes beyond the standard library: lib/ attaches
// stable fields to the errors it throws (`code`, `detail`, `retryable`, …); the public error classes
// declare theirs in types/.
interface Error {
  code?: string;
  [field: string]: any;
}
