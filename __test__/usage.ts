// Type check: uses every export the way a user would. `tsc -p __test__/tsconfig.json` must pass.
import { nativeVersion } from "../index.js";

const version: string = nativeVersion();
void version;
