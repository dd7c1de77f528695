// Copies the web UI a running `executor web` serves into a directory, as the desktop app ships it in
// resources/web-ui: index.html, every file it links to, and every /assets/* file those reference, recursively.
// Nothing of Executor's UI is committed: the test makes this copy at run time.
//
//   node mirror-ui.mjs <origin> <bearer token> <target dir>
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

const [origin, token, target] = process.argv.slice(2);
if (!origin || !token || !target) {
  console.error("usage: node mirror-ui.mjs <origin> <bearer token> <target dir>");
  process.exit(2);
}

const TEXT = /\.(html|js|mjs|css|json|svg|webmanifest)$/;
// What an asset names: "/assets/x.js" in html, "./x.js" or "assets/x.js" in a chunk, url(x.woff2) in css.
const ASSET_REFERENCE = /(?:\/assets\/|["'`(]\.\/|["'`(]assets\/|url\()([A-Za-z0-9_.@~-]+\.(?:js|mjs|css|wasm|svg|png|jpe?g|gif|webp|ico|woff2?|ttf|json))/g;
const ROOT_REFERENCE = /(?:src|href)="(\/[^"/][^"]*)"/g;

const fetched = new Map(); // path -> status
const queue = [];
const enqueue = (path) => {
  if (!fetched.has(path) && !queue.includes(path)) queue.push(path);
};

async function copy(path) {
  const response = await fetch(origin + path, { headers: { authorization: `Bearer ${token}` } });
  fetched.set(path, response.status);
  if (response.status !== 200) {
    if (path === "/") throw new Error(`GET / answered ${response.status}`);
    return; // a pattern matched something that is not a file (a string in a chunk): skip it
  }
  const bytes = Buffer.from(await response.arrayBuffer());
  const file = join(target, path === "/" ? "index.html" : path.slice(1));
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, bytes);
  if (path === "/" || TEXT.test(path)) {
    const text = bytes.toString("utf8");
    if (path === "/") for (const match of text.matchAll(ROOT_REFERENCE)) enqueue(match[1].split(/[?#]/)[0]);
    for (const match of text.matchAll(ASSET_REFERENCE)) enqueue(`/assets/${match[1]}`);
  }
}

enqueue("/");
while (queue.length > 0) {
  await copy(queue.shift());
}
const copied = [...fetched.values()].filter((status) => status === 200).length;
console.log(JSON.stringify({ copied, skipped: fetched.size - copied }));
