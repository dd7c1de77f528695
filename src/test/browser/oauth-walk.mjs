// The OAuth acceptance run of issue 14, started by dev.tether.webui.OAuthBrowserIT inside a network namespace of its
// own (see run.mjs for why):
//
//   node oauth-walk.mjs <config.json>
//
// It starts the TypeScript MCP SDK's OAuth example (an MCP server behind an authorization server that approves at
// once), the real `executor web` (whose web UI it copies), and Tether as the desktop app's sidecar beside it; on each it
// walks Executor's web UI as a user does: add the remote MCP server by its URL, "Sign in" and "Connect" (the UI
// registers a client dynamically, opens the authorization URL in a popup, which lands on the daemon's
// /api/oauth/callback and hands the result back), then the integration's Tools tab. What each run saw goes to
// config.output as JSON; the JUnit test judges it.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { record } from "./walk.mjs";
import { CHROMIUM_FLAGS, awaitAnswer, browserSession, start as startIn, stepsOf, stop, walkExecutorAndTether } from "./servers.mjs";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const log = (line) => console.log(`[browser ${new Date().toISOString().slice(11, 23)}] ${line}`);
const start = (name, command, args, env) => startIn(config.workDir, name, command, args, env);
const STEP_BOUND = 30_000;

/** The walk on one daemon: each step recorded, a failed one with its error and a screenshot, the walk going on. */
async function walkOn(browser, name, origin, authorization) {
  const context = await browserSession(browser, origin, authorization, STEP_BOUND);
  const result = { name, steps: [], popups: [] };
  try {
    const page = await context.newPage();
    const seen = record(page);
    context.on("page", (popup) => {
      const visited = [];
      result.popups.push(visited);
      popup.on("request", (request) => {
        if (request.isNavigationRequest()) visited.push(new URL(request.url()).origin + new URL(request.url()).pathname);
      });
    });
    const step = stepsOf(page, name, result.steps, config.workDir, log);
    let slug = null;
    await step("add the remote MCP server", async () => {
      await page.goto("/");
      await page.getByRole("button", { name: "Connect", exact: true }).click();
      await page.getByRole("link", { name: "MCP", exact: true }).click();
      await page.getByPlaceholder("https://mcp.example.com").first().fill(config.mcpUrl);
      const add = page.getByRole("button", { name: "Add source" });
      await add.and(page.locator(":enabled")).waitFor({ timeout: STEP_BOUND }); // once the probe has answered
      await Promise.all([
        page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/api/mcp/servers"),
        add.click(),
      ]);
      await page.waitForURL(/\/integrations\/[a-z0-9_]+$/, { timeout: STEP_BOUND });
      slug = new URL(page.url()).pathname.split("/").pop();
    });
    await step("sign in through the OAuth popup", async () => {
      if (!slug) throw new Error("no integration");
      await page.getByRole("button", { name: "Add connection", exact: true }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByText("OAuth", { exact: true }).waitFor(); // the method the probe declared, not an API key
      await Promise.all([
        page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/api/oauth/start"),
        dialog.getByRole("button", { name: "Connect", exact: true }).click(),
      ]);
      await page.getByText("Connection added").first().waitFor({ timeout: STEP_BOUND });
    });
    await step("the integration's tools are listed", async () => {
      if (!slug) throw new Error("no integration");
      await page.goto(`/integrations/${slug}`);
      await page.getByRole("tab", { name: "Tools" }).click();
      await page.getByRole("button", { name: new RegExp(`^${slug}\\b`) }).first().click();
      for (const tool of config.tools) {
        await page.getByRole("button", { name: tool, exact: true }).waitFor({ timeout: STEP_BOUND });
      }
      await page.screenshot({ path: join(config.workDir, `${name}-tools.png`) });
    });
    await seen.settled();
    Object.assign(result, { slug, calls: seen.calls, consoleErrors: seen.consoleErrors, pageErrors: seen.pageErrors });
  } finally {
    await context.close();
  }
  return result;
}

mkdirSync(config.workDir, { recursive: true });
const output = { executor: null, tether: null };
const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("EXECUTOR_")));
const example = start("oauth-example", config.node, [config.oauthExample, "--oauth"],
  { ...env, MCP_PORT: String(config.mcpPort), MCP_AUTH_PORT: String(config.authPort) });
const browser = await chromium.launch({ executablePath: config.chromium, args: CHROMIUM_FLAGS, headless: true });
try {
  await awaitAnswer(config.mcpUrl, {}, 30_000, example, 401);
  await walkExecutorAndTether(config, env, browser, walkOn, output, log);
} finally {
  await browser.close();
  await stop(example);
  writeFileSync(config.output, JSON.stringify(output, null, 2));
}
