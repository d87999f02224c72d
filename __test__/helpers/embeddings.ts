// Whether the hybrid-search suites can run: the model package (built by
// scripts/build-model-package.sh into models/minilm, or PRISM_TOOLS_MINILM_PATH) and the embeddings
// addon (`npm run build:embeddings`). Locally a suite skips without them; under CI=true it FAILS.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "vitest";

const root = join(__dirname, "..", "..");
export const modelDir = process.env.PRISM_TOOLS_MINILM_PATH || join(root, "models", "minilm");
const inCi = !["", "0", "false"].includes((process.env.CI ?? "").toLowerCase());

function addonPresent(): boolean {
  if (process.env.PRISM_TOOLS_EMBEDDINGS_LIBRARY_PATH) return true;
  try {
    const { detectPlatform } = require(join(root, "lib", "platform.js"));
    return existsSync(join(root, `prism-tools-embeddings.${detectPlatform().key}.node`));
  } catch {
    return false;
  }
}

export const modelPresent = existsSync(join(modelDir, "model.safetensors"));
export const embeddingsAvailable = modelPresent && addonPresent();

/** Declares the CI failure when the model or addon is missing; answers whether to run the suite. */
export function requireEmbeddings(suite: string): boolean {
  if (!embeddingsAvailable && inCi) {
    describe(suite, () => {
      it("has the model package and the embeddings addon (CI=true)", () => {
        throw new Error(
          `model package at ${modelDir}: ${modelPresent ? "present" : "MISSING"}; embeddings addon: ${addonPresent() ? "present" : "MISSING"}. ` +
            ".ci/run must run `bash scripts/build-model-package.sh` and `npm run build:embeddings`",
        );
      });
    });
  }
  return embeddingsAvailable;
}
