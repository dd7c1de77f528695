// The HTTP sources acceptance run of issue 15, started by dev.tether.webui.HttpSourcesBrowserIT inside a network
// namespace of its own (see run.mjs for why):
//
//   node http-sources-walk.mjs <config.json>
//
// It starts the books servers (a real GraphQL server and a small REST API serving its OpenAPI document, one JVM),
// the real `executor web` (whose web UI it copies), and Tether as the desktop app's sidecar beside it; on each it walks
// Executor's web UI as a user does: Connect, "OpenAPI", paste the document's URL, see the preview, "Add integration";
// Connect, "GraphQL", the endpoint, "Add source"; and each integration's Tools tab. On Tether it then pastes a
// Google Discovery document into the OpenAPI form. What each run saw goes to config.output as JSON; the JUnit test
// judges it.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { record } from "./walk.mjs";
import { CHROMIUM_FLAGS, awaitAnswer, browserSession, start as startIn, stepsOf, stop, walkExecutorAndTether } from "./servers.mjs";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const log = (line) => console.log(`[browser ${new Date().toISOString().slice(11, 23)}] ${line}`);
const start = (name, command, args, env) => startIn(config.workDir, name, command, args, env);
const STEP_BOUND = 30_000;

/** Resolves with the first answer to METHOD path while the action runs. */
async function answerTo(page, method, path, action) {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === method && new URL(r.url()).pathname === path, { timeout: STEP_BOUND }),
    action(),
  ]);
  return response;
}

/**
 * The add flows leave an integration without an account, and Executor 1.5.9's UI offers "Add connection" only for
 * integrations with auth methods: its connection is made as Executor's CLI makes it, from the page (same origin and
 * credentials as the UI's own calls). Then the tools the daemon lists for it, as names.
 */
async function connectAndList(page, integration) {
  return page.evaluate(async (slug) => {
    const connected = await fetch("/api/connections", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ owner: "org", name: "default", integration: slug, template: "none", values: {} }),
    });
    await connected.text();
    if (connected.status !== 200) throw new Error(`POST /api/connections for ${slug} answered ${connected.status}`);
    const tools = await (await fetch(`/api/tools?integration=${slug}`)).json();
    return tools.map((tool) => tool.name).sort();
  }, integration);
}

/** Opens the integration's Tools tab, unfolds its whole tree (integration, then groups) and waits for each tool's row. */
async function toolsTab(page, slug, tools) {
  await page.goto(`/integrations/${slug}`);
  await page.getByRole("tab", { name: "Tools" }).click();
  const panel = page.getByRole("tabpanel", { name: "Tools" });
  await panel.getByRole("button", { name: new RegExp(`^${slug}\\b`) }).first().waitFor();
  const folded = panel.locator('button[aria-expanded="false"]:not([aria-haspopup])');
  // every tool's groups nest at most as deep as its name has segments
  const bound = tools.reduce((sum, tool) => sum + tool.split(".").length, 1);
  for (let unfolded = 0; unfolded < bound && (await folded.count()) > 0; unfolded++) {
    await folded.first().click();
  }
  const leaves = new Map();
  for (const tool of tools) {
    const leaf = tool.slice(tool.lastIndexOf(".") + 1);
    leaves.set(leaf, (leaves.get(leaf) ?? 0) + 1);
  }
  for (const [leaf, count] of leaves) {
    await panel.getByText(leaf, { exact: true }).nth(count - 1).waitFor(); // userinfo.get and userinfo.v2.me.get: two rows "get"
  }
}

/** The walk on one daemon: each step recorded, a failed one with its error and a screenshot, the walk going on. */
async function walkOn(browser, name, origin, authorization) {
  const context = await browserSession(browser, origin, authorization, STEP_BOUND);
  const result = { name, steps: [], preview: null, integrations: {}, tools: {} };
  try {
    const page = await context.newPage();
    const seen = record(page);
    const step = stepsOf(page, name, result.steps, config.workDir, log);
    const addedAt = async (add) => {
      await Promise.all([page.waitForURL(/\/integrations\/[a-z0-9_]+$/, { timeout: STEP_BOUND }), add()]);
      return new URL(page.url()).pathname.split("/").pop();
    };
    await step("OpenAPI: preview the document at a URL", async () => {
      await page.goto("/");
      await page.getByRole("button", { name: "Connect", exact: true }).click();
      await page.getByRole("link", { name: "OpenAPI", exact: true }).click();
      const preview = await answerTo(page, "POST", "/api/openapi/preview",
        () => page.getByPlaceholder("https://api.example.com/openapi.json").fill(config.openapiUrl));
      result.preview = await preview.json();
      // what the UI makes of the preview: the title and "<version> · 4 operations · 1 tag"
      await page.getByText(`${config.openapiOperations} operations`, { exact: false }).waitFor();
      await page.getByRole("textbox", { name: "e.g. Sentry API" }).and(page.locator(`[value="${config.openapiTitle}"]`)).waitFor();
    });
    await step("OpenAPI: add the integration", async () => {
      const add = page.getByRole("button", { name: "Add integration", exact: true });
      result.integrations.openapi = await addedAt(() => answerTo(page, "POST", "/api/openapi/specs", () => add.click()));
    });
    await step("OpenAPI: its tools in the Tools tab", async () => {
      const slug = result.integrations.openapi;
      if (!slug) throw new Error("no integration");
      result.tools.openapi = await connectAndList(page, slug);
      if (result.tools.openapi.length !== config.openapiOperations) throw new Error(`tools listed: ${result.tools.openapi}`);
      await toolsTab(page, slug, result.tools.openapi);
      await page.screenshot({ path: join(config.workDir, `${name}-openapi-tools.png`) });
    });
    await step("GraphQL: add the endpoint", async () => {
      await page.goto("/");
      await page.getByRole("button", { name: "Connect", exact: true }).click();
      await page.getByRole("link", { name: "GraphQL", exact: true }).click();
      await page.getByPlaceholder("https://api.example.com/graphql").fill(config.graphqlUrl);
      const add = page.getByRole("button", { name: "Add source", exact: true });
      await add.and(page.locator(":enabled")).waitFor();
      result.integrations.graphql = await addedAt(() => answerTo(page, "POST", "/api/graphql/integrations", () => add.click()));
    });
    await step("GraphQL: its query and mutation tools in the Tools tab", async () => {
      const slug = result.integrations.graphql;
      if (!slug) throw new Error("no integration");
      result.tools.graphql = await connectAndList(page, slug);
      if (!result.tools.graphql.some((tool) => tool.startsWith("mutation."))) throw new Error(`tools listed: ${result.tools.graphql}`);
      await toolsTab(page, slug, result.tools.graphql);
      await page.screenshot({ path: join(config.workDir, `${name}-graphql-tools.png`) });
    });
    await seen.settled();
    const compared = seen.calls.length;
    // Executor 1.5.9 reads a Discovery document only from googleapis.com, out of reach here: Tether alone is walked.
    if (name === "tether") {
      await step("Google Discovery: paste a document, preview it, add it", async () => {
        await page.goto("/");
        await page.getByRole("button", { name: "Connect", exact: true }).click();
        await page.getByRole("link", { name: "OpenAPI", exact: true }).click();
        const preview = await answerTo(page, "POST", "/api/openapi/preview",
          () => page.getByPlaceholder("https://api.example.com/openapi.json").fill(readFileSync(config.discoveryFile, "utf8")));
        if (preview.status() !== 200) throw new Error(`the preview answered ${preview.status()}: ${await preview.text()}`);
        await page.getByText(`${config.discoveryTools.length} operations`, { exact: false }).waitFor();
        const add = page.getByRole("button", { name: "Add integration", exact: true });
        result.integrations.discovery = await addedAt(() => answerTo(page, "POST", "/api/openapi/specs", () => add.click()));
      });
      await step("Google Discovery: its tools in the Tools tab", async () => {
        const slug = result.integrations.discovery;
        if (!slug) throw new Error("no integration");
        result.tools.discovery = await connectAndList(page, slug);
        await toolsTab(page, slug, result.tools.discovery);
        await page.screenshot({ path: join(config.workDir, `${name}-discovery-tools.png`) });
      });
      await seen.settled();
    }
    Object.assign(result, { calls: seen.calls.slice(0, compared), discoveryCalls: seen.calls.slice(compared),
      consoleErrors: seen.consoleErrors, pageErrors: seen.pageErrors });
  } finally {
    await context.close();
  }
  return result;
}

mkdirSync(config.workDir, { recursive: true });
const output = { executor: null, tether: null };
const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("EXECUTOR_")));
const books = start("books", config.java, ["-cp", config.classpath, "dev.tether.testsupport.BooksServers",
  String(config.graphqlPort), String(config.openapiPort)], env);
const browser = await chromium.launch({ executablePath: config.chromium, args: CHROMIUM_FLAGS, headless: true });
try {
  await awaitAnswer(config.openapiUrl, {}, 60_000, books);
  await walkExecutorAndTether(config, env, browser, walkOn, output, log);
} finally {
  await browser.close();
  await stop(books);
  writeFileSync(config.output, JSON.stringify(output, null, 2));
}
