// Internal to the store conformance kits (not a package export).

/** What a store conformance kit runs against: a store, a Promise of one, or a function answering either. */
export type StoreUnderTest<S> = S | Promise<S> | (() => S | Promise<S>);

export declare function conformanceChecks(
  kit: string,
  conflictCode: string,
): {
  fail(message: string): never;
  expectConflict(run: () => unknown, message: string): Promise<void>;
};
