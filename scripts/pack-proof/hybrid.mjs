// The hybrid search of an installed package: the model package and the embeddings addon come from
// node_modules (not a checkout), and the search runs with no network (scripts/pack-proof.sh runs
// this file in a network namespace of its own).
import { createRequire } from "node:module";
import { createToolSearchIndex } from "prism-tools-native";
import { createEmbeddingRanker } from "prism-tools-native/embeddings";

const require = createRequire(import.meta.url);
const model = require.resolve("prism-tools-native-minilm/package.json");
const addon = require.resolve("prism-tools-native-embeddings-linux-x64-gnu");
if (!model.includes("/node_modules/") || !addon.includes("/node_modules/")) throw new Error(`not installed: ${model} ${addon}`);

const tools = [
  { name: "get_weather", description: "Current weather for a city." },
  { name: "create_issue", description: "Create a new issue in a GitHub repository." },
  { name: "book_table", description: "Reserve a table at a restaurant." },
];
const index = createToolSearchIndex(tools, { embeddings: await createEmbeddingRanker() });
await index.ready();
if (index.mode !== "hybrid") throw index.embeddingError;
const hits = await index.search("will it rain in Lyon tomorrow?", { k: 1 });
if (hits[0]?.name !== "get_weather") throw new Error(`hybrid search answered ${JSON.stringify(hits)}`);
console.log(`hybrid search from the tarballs: ${hits[0].name} (model ${model}, addon ${addon})`);
