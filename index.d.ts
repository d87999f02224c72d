// Public types of prism-tools-native. Each concern's types live in types/<concern>.d.ts.

export * from "./types/harness";

/** The version of the native addon that was loaded. */
export declare function nativeVersion(): string;

// Middleware, extensions, policies, policy errors
export * from "./types/middleware"
export * from "./types/extensions"
export * from "./types/policy"
export * from "./types/errors"

export * from "./types/validation";
export * from "./types/arguments";

export * from "./types/effects";
export * from "./types/ledger";

export * from "./types/search";

export * from "./types/agent";
export * from "./types/approval";
