// What a desktop user does in Executor's web UI, step by step, and what the page saw meanwhile: every API call
// (method, route, status, the JSON shape of its answer), console errors and page errors. The same walk runs against
// the real Executor daemon and against Tether, so their records can be compared.

// Generous: a refresh starts a docker child, which on a loaded 2-core machine takes tens of seconds on either daemon.
const STEP_BOUND = 60_000;

/** Starts recording a page's API traffic and errors; returns the record the walk fills in. */
export function record(page) {
  const calls = [];
  const consoleErrors = [];
  const pageErrors = [];
  const pending = new Set();
  page.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push({ text: message.text(), url: page.url() });
  });
  page.on("pageerror", (error) => pageErrors.push({ text: String(error?.message ?? error), url: page.url() }));
  page.on("response", (response) => {
    const url = new URL(response.url());
    if (!url.pathname.startsWith("/api/")) return;
    const request = response.request();
    const done = (async () => {
      let shape = null;
      try {
        if ((response.headers()["content-type"] ?? "").includes("json")) shape = shapeOf(await response.json());
      } catch {
        shape = "unreadable"; // the page navigated away before the body arrived
      }
      calls.push({ method: request.method(), route: route(url), status: response.status(), shape });
    })();
    pending.add(done);
    done.finally(() => pending.delete(done));
  });
  page.on("requestfailed", (request) => {
    const url = new URL(request.url());
    // net::ERR_ABORTED: the page left before the answer (a navigation), which is the walk's doing, not the server's
    if (url.pathname.startsWith("/api/") && request.failure()?.errorText !== "net::ERR_ABORTED") {
      calls.push({ method: request.method(), route: route(url), status: 0, shape: null, failure: request.failure()?.errorText });
    }
  });
  return { calls, consoleErrors, pageErrors, settled: () => Promise.allSettled([...pending]) };
}

/** The route of a call: the path with ids made generic, and the names (not values) of its query. */
function route(url) {
  const path = url.pathname.split("/").map((segment) => (/^exec_|^[0-9a-f-]{16,}$/i.test(segment) ? "{id}" : segment)).join("/");
  const keys = [...new Set(url.searchParams.keys())].sort();
  return keys.length > 0 ? `${path}?${keys.join("&")}` : path;
}

/** A JSON value's shape: key sets and value types, recursively; an array is the set of its elements' shapes. */
export function shapeOf(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) {
    const elements = [...new Set(value.map((element) => JSON.stringify(shapeOf(element))))].sort();
    return { array: elements.map((element) => JSON.parse(element)) };
  }
  if (typeof value === "object") {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, shapeOf(value[key])]));
  }
  return typeof value;
}

/**
 * Does what the action does (a click) and answers the API response it caused. Two ways a step can wait in vain are
 * told apart: a click the page did not act on (it re-rendered under the pointer) sends no request, and a repeatable
 * action (`again`) is then made once more; a request that was sent is waited for as long as the daemon needs, since a
 * refresh may start a docker child.
 */
async function apiAnswer(page, method, pathPattern, action, timeout = STEP_BOUND, { again = false } = {}) {
  const matches = (request) => request.method() === method && pathPattern.test(new URL(request.url()).pathname);
  const sent = async (bound) => {
    const [request] = await Promise.all([page.waitForRequest(matches, { timeout: bound }), action()]);
    return request;
  };
  let request;
  try {
    request = await sent(again ? STEP_BOUND / 4 : timeout);
  } catch (error) {
    if (!again || !String(error?.message ?? error).includes("Timeout")) throw error;
    request = await sent(timeout);
  }
  let timer;
  const bound = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer to ${method} ${new URL(request.url()).pathname} within ${timeout} ms`)), timeout);
  });
  try {
    const response = await Promise.race([request.response(), bound]);
    if (response === null) throw new Error(`${method} ${new URL(request.url()).pathname} failed: ${request.failure()?.errorText}`);
    return response;
  } finally {
    clearTimeout(timer);
  }
}

/** Adds a stdio MCP source through the UI's own form; answers its slug. */
export async function addStdioSource(page, name, command, args) {
  await page.goto("/");
  await page.getByRole("button", { name: "Connect", exact: true }).click();
  await page.getByRole("link", { name: "MCP", exact: true }).click();
  await page.getByRole("button", { name: "Stdio", exact: true }).click();
  await page.getByPlaceholder("npx", { exact: true }).fill(command);
  await page.getByPlaceholder("-y chrome-devtools-mcp@latest").fill(args);
  await page.getByPlaceholder("My MCP Server").fill(name);
  await apiAnswer(page, "POST", /^\/api\/mcp\/servers$/, () => page.getByRole("button", { name: "Add source" }).click());
  await page.waitForURL(/\/integrations\/[a-z0-9_]+$/, { timeout: STEP_BOUND });
  const slug = new URL(page.url()).pathname.split("/").pop();
  // Executor 1.5.9's UI offers "Add connection" only for integrations with auth methods, which a stdio source has
  // none of: its connection is made as Executor's CLI makes it, through the API, from the page (same origin and
  // credentials as the UI's own calls).
  // the body is read here, in the page, so that it has fully arrived before the walk navigates on
  const status = await page.evaluate(async (integration) => {
    const response = await fetch("/api/connections", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ owner: "org", name: "default", integration, template: "none", values: {} }),
    });
    await response.text();
    return response.status;
  }, slug);
  if (status !== 200) throw new Error(`POST /api/connections for ${slug} answered ${status}`);
  return slug;
}

/**
 * The whole walk of the acceptance test. A step that fails is recorded and the walk goes on with the next (each
 * starts from a page it navigates to), so that one gap does not hide the others; answers the failed steps.
 */
export async function walk(page, { command, args, everything, log, shot, daemon }) {
  const failed = [];
  const step = async (name, action, { essential = false } = {}) => {
    log(`step: ${name}`);
    try {
      await action();
    } catch (error) {
      const message = String(error?.message ?? error).split("\n")[0];
      failed.push({ step: name, error: message });
      log(`step failed: ${name}: ${message}`);
      await shot(name).catch(() => {});
      if (essential) throw error;
    }
  };
  let slug;
  await step("home", async () => {
    await page.goto("/");
    await page.getByRole("heading", { name: "Integrations" }).waitFor({ timeout: STEP_BOUND });
    // the sidebar lists the built-in Executor integration once /api/integrations has answered
    await page.waitForLoadState("networkidle", { timeout: STEP_BOUND }).catch(() => {});
  });
  await step("connect: add an MCP stdio source through the form", async () => {
    slug = await addStdioSource(page, "Fixture One", command, args);
  }, { essential: true });
  await step("integration: Accounts tab", async () => {
    await page.reload();
    await page.getByRole("tab", { name: "Accounts" }).click();
    await page.getByText("default", { exact: true }).first().waitFor({ timeout: STEP_BOUND });
  });
  await step("integration: Refresh", async () => {
    await apiAnswer(page, "POST", /\/refresh$/, () => page.getByRole("button", { name: "Refresh", exact: true }).click(), 2 * STEP_BOUND, { again: true });
  });
  await step("integration: Tools tab", async () => {
    await page.goto(`/integrations/${slug}`);
    await page.getByRole("tab", { name: "Tools" }).click();
    await page.getByRole("button", { name: new RegExp(`^${slug}\\b`) }).first().click();
  });
  await step("tool: Schema tab", async () => {
    await apiAnswer(page, "GET", /^\/api\/tools\/schema$/, () => page.getByRole("button", { name: "echo", exact: true }).click(), STEP_BOUND, { again: true });
    await page.getByRole("tab", { name: "Schema" }).click();
    await page.getByText("Parameters").first().waitFor({ timeout: STEP_BOUND });
  });
  await step("tool: TypeScript tab", async () => {
    await page.getByRole("tab", { name: "TypeScript" }).click();
    await page.waitForTimeout(300);
  });
  await step("tool: Run tab, run it", async () => {
    await page.getByRole("tab", { name: "Run" }).click();
    await page.locator("#jsf-text").fill("hello from the browser");
    // the first execution builds the JavaScript engine: on a loaded machine that took tens of seconds
    await apiAnswer(page, "POST", /^\/api\//, () => page.getByRole("button", { name: "Run", exact: true }).last().click(), 90_000);
    await page.waitForTimeout(500);
  });
  await step("integration: Edit and rename", async () => {
    await page.goto(`/integrations/${slug}`);
    await page.getByRole("button", { name: "Edit", exact: true }).click();
    await page.getByLabel("Integration name").fill("Fixture Renamed");
    await Promise.all([
      page.waitForResponse((r) => r.request().method() !== "GET" && new URL(r.url()).pathname.startsWith("/api/"), { timeout: STEP_BOUND }),
      page.getByRole("button", { name: "Save", exact: true }).click(),
    ]);
    await page.getByText("Fixture Renamed").first().waitFor({ timeout: STEP_BOUND });
  });
  await step("integration: Refresh again", async () => {
    await page.goto(`/integrations/${slug}`);
    await apiAnswer(page, "POST", /\/refresh$/, () => page.getByRole("button", { name: "Refresh", exact: true }).click(), 2 * STEP_BOUND, { again: true });
  });
  await step("policies: add one", async () => {
    await page.goto("/policies");
    await page.locator("#policy-pattern").fill(`${slug}.echo`);
    await page.locator("select").first().selectOption({ label: "Require approval" });
    await apiAnswer(page, "POST", /^\/api\/policies$/, () => page.getByRole("button", { name: "Add policy" }).click());
    await page.getByText(`${slug}.echo`).first().waitFor({ timeout: STEP_BOUND });
  });
  await step("tools: the integration's tools under the policy", async () => {
    await page.goto(`/integrations/${slug}`);
    await page.getByRole("tab", { name: "Tools" }).click();
    await page.getByRole("button", { name: new RegExp(`^${slug}\\b`) }).first().click();
    await page.getByRole("button", { name: "echo", exact: true }).waitFor({ timeout: STEP_BOUND });
  });
  await step("secrets", async () => {
    await page.goto("/secrets");
    await page.waitForLoadState("networkidle", { timeout: STEP_BOUND }).catch(() => {});
  });
  await step("the built-in Executor integration", async () => {
    await page.goto("/integrations/executor");
    await page.getByRole("tab", { name: "Tools" }).click();
    await page.waitForLoadState("networkidle", { timeout: STEP_BOUND }).catch(() => {});
  });
  await step("approval page of a paused execution", async () => {
    const paused = await page.evaluate(async (address) => {
      const response = await fetch("/api/executions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code: `return await tools.${address}({})` }),
      });
      return { status: response.status, body: await response.json() };
    }, `${slug}.org.default.delete_everything`); // the fixture marks it destructive: it asks for approval
    const executionId = paused.body?.structured?.executionId;
    if (!executionId) throw new Error(`the execution did not pause: ${JSON.stringify(paused)}`);
    await page.goto(`/resume/${executionId}`);
    await apiAnswer(page, "POST", /^\/api\/executions\/[^/]+\/resume$/, () => page.getByRole("button", { name: "Approve" }).click());
    await page.waitForTimeout(500);
  });
  await step("approval page of an MCP agent's paused execution (elicitation_mode=browser)", async () => {
    // An agent on /mcp?elicitation_mode=browser: its execute pauses with the web UI's approval URL, the user approves
    // there, and the agent's resume then completes. Executor 1.5.9 runs its MCP server on an engine of its own
    // (apps/local/src/main.ts), so its approval page asks /api/executions for an execution that engine never saw and
    // says "no longer available" with its buttons disabled: on Executor the step checks that gap (so a release that
    // mends it shows here), on Tether, whose one engine serves both, the approval. In a page of its own, so that the
    // calls compared between the daemons are the same on both.
    const mcpPage = await page.context().newPage();
    try {
      const mcp = (session, message) => mcpPage.evaluate(async ({ session, message }) => {
        const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
        if (session) headers["mcp-session-id"] = session;
        const response = await fetch("/mcp?elicitation_mode=browser", { method: "POST", headers, body: JSON.stringify(message) });
        const text = await response.text();
        return { session: response.headers.get("mcp-session-id"), status: response.status, body: text ? JSON.parse(text) : null };
      }, { session, message });
      await mcpPage.goto("/");
      const started = await mcp(null, { jsonrpc: "2.0", id: 0, method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "walk", version: "1" } } });
      const session = started.session;
      if (!session) throw new Error(`no MCP session: ${JSON.stringify(started)}`);
      await mcp(session, { jsonrpc: "2.0", method: "notifications/initialized" });
      const call = (id, name, args) => mcp(session, { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
      const paused = await call(1, "execute", { code: `return await tools.${slug}.org.default.delete_everything({})` });
      const waiting = paused.body?.result?.structuredContent;
      if (waiting?.status !== "user_approval_required") throw new Error(`the execution did not wait for approval: ${JSON.stringify(paused)}`);
      const approval = new URL(waiting.approvalUrl);
      await mcpPage.goto(approval.pathname + approval.search);
      if (daemon === "executor") {
        await mcpPage.getByText("This paused execution is no longer available").waitFor({ timeout: STEP_BOUND });
        return;
      }
      await apiAnswer(mcpPage, "POST", /^\/api\/mcp-sessions\/[^/]+\/executions\/[^/]+\/resume$/,
        () => mcpPage.getByRole("button", { name: "Approve" }).click());
      const resumed = await call(2, "resume", { executionId: waiting.executionId });
      if (resumed.body?.result?.structuredContent?.status !== "completed") {
        throw new Error(`resume after the approval did not complete: ${JSON.stringify(resumed)}`);
      }
    } finally {
      await mcpPage.close();
    }
  });
  await step("delete the integration", async () => {
    await deleteIntegration(page, slug);
  });
  await elicitations(page, step, everything);
  return failed;
}

/**
 * server-everything's two questions (MCP elicitation) answered on the approval page `/resume/{executionId}`, as a
 * user of Executor's web UI answers them: the form the page renders from the requested schema, filled in and
 * approved; the link a URL question carries, approved; a decline of each. The page itself shows only "Approve sent"
 * and the like, so each step reads what the server made of the answer from the resume call the page made.
 */
async function elicitations(page, step, everything) {
  let tools;
  await step("elicitation: add server-everything (stdio) through the form", async () => {
    tools = `tools.${await addStdioSource(page, "Everything", everything.command, everything.args)}.org.default`;
  });
  const ask = async (code) => {
    const paused = await page.evaluate(async (code) => {
      const response = await fetch("/api/executions", {
        method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ code }),
      });
      return { status: response.status, body: await response.json() };
    }, code);
    const executionId = paused.body?.structured?.executionId;
    if (paused.body?.status !== "paused" || !executionId) throw new Error(`the execution did not pause: ${JSON.stringify(paused)}`);
    await page.goto(`/resume/${executionId}`);
    return executionId;
  };
  const answer = async (button) => {
    const response = await apiAnswer(page, "POST", /^\/api\/executions\/[^/]+\/resume$/,
      () => page.getByRole("button", { name: button, exact: true }).click());
    const body = await response.json();
    if (response.status() !== 200) throw new Error(`${button}: the resume answered ${response.status()} ${JSON.stringify(body)}`);
    return body;
  };
  const expect = (what, value, predicate) => {
    if (!predicate(value)) throw new Error(`${what}: ${JSON.stringify(value)}`);
  };
  // what the server-everything call answered, as the code got it: {ok, data: {content: [{text}]}}
  const texts = (result) => (result?.data?.content ?? []).map((part) => part.text).join("\n");
  /** After the answer, the page of an execution that is over says so: nothing is left paused (a page of its own,
   *  so that its 404 is not counted among the walk's calls). */
  const over = async (executionId) => {
    const later = await page.context().newPage();
    try {
      await later.goto(`/resume/${executionId}`);
      await later.getByText("This paused execution is no longer available").waitFor({ timeout: STEP_BOUND });
    } finally {
      await later.close();
    }
  };
  const URL_ASKED = "https://example.org/consent";

  await step("elicitation: a form, then a link, on one approval page", async () => {
    const executionId = await ask(`const form = await ${tools}.trigger_elicitation_request({});
      const link = await ${tools}.trigger_url_elicitation({ url: ${JSON.stringify(URL_ASKED)} });
      return { form, link };`);
    // the fields the page renders from the requested schema, with its defaults
    await page.locator("#trusted-interaction-field-name").fill("Ada Lovelace", { timeout: STEP_BOUND });
    expect("the integer field's default", await page.locator("#trusted-interaction-field-integer").inputValue(), (v) => v === "42");
    await page.locator("#trusted-interaction-field-check").click();
    await page.locator("#trusted-interaction-field-integer").fill("7");
    await page.locator("#trusted-interaction-field-untitledSingleSelectEnum").selectOption("Joey");
    await page.locator("#trusted-interaction-field-email").fill("ada@example.org");
    // the code asks again: the resume answers the next pause, and the page shows that question in place
    const next = await answer("Approve");
    expect("the resume after the form", next, (n) => n.status === "paused" && n.structured?.interaction?.kind === "url"
      && n.structured?.executionId);
    const link = page.getByRole("link", { name: "Open link" });
    await link.waitFor({ timeout: STEP_BOUND });
    expect("the link the page shows", await link.getAttribute("href"), (href) => href === URL_ASKED);
    const done = await answer("Approve");
    expect("the resume after the link", done, (d) => d.status === "completed" && d.isError === false);
    const form = texts(done.structured?.result?.form);
    for (const line of ["✅ User provided the requested information!", "- Name: Ada Lovelace", "- Agreed to terms: true",
      "- Email: ada@example.org", "- Favorite Integer: 7", '"untitledSingleSelectEnum": "Joey"',
      '"titledSingleSelectEnum": "hero-1"']) {
      expect(`the server's answer to the form lacks ${line}`, form, (text) => text.includes(line));
    }
    expect("the server's answer to the link", texts(done.structured?.result?.link),
      (text) => text.includes("✅ User completed the URL elicitation flow.") && text.includes(`URL: ${URL_ASKED}`));
    await page.getByText("Approve sent").waitFor({ timeout: STEP_BOUND });
    await over(executionId);
    await over(next.structured.executionId);
  });
  await step("elicitation: a form declined", async () => {
    const executionId = await ask(`return await ${tools}.trigger_elicitation_request({})`);
    await page.locator("#trusted-interaction-field-name").waitFor({ timeout: STEP_BOUND });
    const done = await answer("Decline");
    expect("the server's answer to the decline", texts(done.structured?.result),
      (text) => text.includes("❌ User declined to provide the requested information."));
    await page.getByText("Decline sent").waitFor({ timeout: STEP_BOUND });
    await over(executionId);
  });
  await step("elicitation: a link declined", async () => {
    await ask(`return await ${tools}.trigger_url_elicitation({ url: ${JSON.stringify(URL_ASKED)} })`);
    await page.getByRole("link", { name: "Open link" }).waitFor({ timeout: STEP_BOUND });
    const done = await answer("Decline");
    expect("the server's answer to the decline", texts(done.structured?.result),
      (text) => text.includes("❌ User declined to open the URL"));
  });
  await step("elicitation: delete server-everything", async () => {
    await deleteIntegration(page, tools.split(".")[1]);
  });
}

/**
 * A call of the daemon's API from the page, as Executor's CLI makes it (same origin and credentials as the UI's own
 * calls); the body is read in the page, so that it has fully arrived before the walk navigates on.
 */
function apiOf(page) {
  return (method, path, body) => page.evaluate(async ({ method, path, body }) => {
    const response = await fetch(path, { method, headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }, { method, path, body });
}

/**
 * A paused execution outlives its daemon (on Tether; Executor loses it): a call that asks for approval pauses, the
 * sidecar is killed with SIGKILL and started again on its data dir (restart()), and the approval page /resume/{id} shows
 * the pause still, after a reload too; approved there, the resume completes with the tool's answer. Answers what the
 * resume answered.
 */
export async function durablePause(page, { command, args, restart, log }) {
  const slug = await addStdioSource(page, "Durable", command, args);
  const api = apiOf(page);
  const refreshed = await api("POST", `/api/connections/org/${slug}/default/refresh`);
  if (refreshed.status !== 200) throw new Error(`the refresh answered ${refreshed.status}`);
  const paused = await api("POST", "/api/executions", { code: `return await tools.${slug}.org.default.delete_everything({})` });
  const executionId = paused.body?.structured?.executionId;
  if (paused.body?.status !== "paused" || !executionId) throw new Error(`the execution did not pause: ${JSON.stringify(paused)}`);
  log(`durable: ${executionId} paused; the sidecar is killed with SIGKILL and started again`);
  await restart();
  await page.goto(`/resume/${executionId}`);
  await page.getByRole("button", { name: "Approve" }).waitFor({ timeout: STEP_BOUND });
  await page.reload();
  const approve = page.getByRole("button", { name: "Approve" });
  await approve.waitFor({ timeout: STEP_BOUND });
  if (await page.getByText("This paused execution is no longer available").count() > 0) {
    throw new Error("the approval page says the paused execution is no longer available");
  }
  const response = await apiAnswer(page, "POST", /^\/api\/executions\/[^/]+\/resume$/, () => approve.click());
  const body = await response.json();
  const text = (body?.structured?.result?.data?.content ?? []).map((part) => part.text).join("\n");
  if (response.status() !== 200 || body.status !== "completed" || !text.includes("nothing was deleted")) {
    throw new Error(`the resume after the restart answered ${response.status()} ${JSON.stringify(body)}`);
  }
  await page.getByText("Approve sent").waitFor({ timeout: STEP_BOUND });
  await deleteIntegration(page, slug);
  return { executionId, text };
}

/** Deletes an integration through its page's Delete button and the confirmation. */
export async function deleteIntegration(page, slug) {
  await page.goto(`/integrations/${slug}`);
  await page.getByRole("button", { name: "Delete", exact: true }).first().click();
  await apiAnswer(page, "DELETE", /^\/api\//, () => page.getByRole("button", { name: "Confirm Delete", exact: true }).click());
  await page.waitForURL((url) => !url.pathname.endsWith(`/${slug}`), { timeout: STEP_BOUND }).catch(() => {});
}

/**
 * The bug report through the UI: `count` docker stdio integrations, Refresh clicked and abandoned (navigation away
 * `abandonAfterMs` later) `rounds` times, then every integration deleted.
 */
export async function storm(page, { command, argsFor, count, rounds, abandonAfterMs, log }) {
  const slugs = [];
  for (let i = 1; i <= count; i++) {
    slugs.push(await addStdioSource(page, `Storm ${i}`, command, argsFor(i)));
  }
  log(`storm: ${slugs.length} integrations added`);
  for (let round = 0; round < rounds; round++) {
    const slug = slugs[round % slugs.length];
    await page.goto(`/integrations/${slug}`);
    await page.getByRole("button", { name: "Refresh", exact: true }).click();
    await page.waitForTimeout(abandonAfterMs);
    await page.goto("/");
  }
  log(`storm: ${rounds} refreshes abandoned`);
  for (const slug of slugs) {
    await deleteIntegration(page, slug);
  }
  log("storm: every integration deleted");
  return slugs;
}

/**
 * A remote server of MCP 2026-07-28 only (the TypeScript SDK v2 with `legacy: 'reject'`, src/test/clients/
 * mcp-stateless-server.mjs, at `endpoint`) as a source: registered and connected as Executor's CLI does, through the
 * API, from the page; its tools listed on the integration's Tools tab and one called; then code calling its `confirm`,
 * whose answer is `input_required` with a form question, pauses, and the user answers it on the approval page
 * `/resume/{id}`: the question shown, `name` filled in, Approve. The server's answer to the retry is read from the
 * resume call the page made. Tether only: Executor 1.5.9 speaks no 2026-07-28 to its sources. Answers what it saw.
 */
export async function modernQuestion(page, { endpoint, log }) {
  const api = apiOf(page);
  const expect = (what, reply, predicate) => {
    if (!predicate(reply)) throw new Error(`${what}: ${JSON.stringify(reply)}`);
  };
  await page.goto("/");
  const added = await api("POST", "/api/mcp/servers", { transport: "remote", name: "Modern", endpoint, remoteTransport: "streamable-http" });
  expect("registering the server", added, (r) => r.status === 200 && r.body?.slug);
  const slug = added.body.slug;
  const connected = await api("POST", "/api/connections", { owner: "org", name: "default", integration: slug, template: "none", values: {} });
  expect("its connection", connected, (r) => r.status === 200);
  const refreshed = await api("POST", `/api/connections/org/${slug}/default/refresh`);
  expect("its refresh", refreshed, (r) => r.status === 200);
  await page.goto(`/integrations/${slug}`);
  await page.getByRole("tab", { name: "Tools" }).click();
  await page.getByRole("button", { name: new RegExp(`^${slug}\\b`) }).first().click();
  for (const tool of ["echo", "confirm"]) {
    await page.getByRole("button", { name: tool, exact: true }).waitFor({ timeout: STEP_BOUND });
  }
  const echoed = await api("POST", "/api/tools/call", { address: `tools.${slug}.org.default.echo`, args: { text: "over 2026-07-28" } });
  expect("its echo", echoed, (r) => r.status === 200 && JSON.stringify(r.body).includes("over 2026-07-28"));
  const paused = await api("POST", "/api/executions", { code: `return await tools.${slug}.org.default.confirm({ item: "the release" })` });
  const executionId = paused.body?.structured?.executionId;
  expect("the execution did not pause", paused, (r) => r.body?.status === "paused" && executionId);
  log(`modern: ${executionId} paused on the server's input_required`);
  await page.goto(`/resume/${executionId}`);
  await page.getByText("Who confirms the release?").first().waitFor({ timeout: STEP_BOUND });
  await page.locator("#trusted-interaction-field-name").fill("Grace Hopper");
  const response = await apiAnswer(page, "POST", /^\/api\/executions\/[^/]+\/resume$/,
    () => page.getByRole("button", { name: "Approve", exact: true }).click());
  const body = await response.json();
  // as the code got it: {ok, data: {content: [{text}]}}
  const text = (body?.structured?.result?.data?.content ?? []).map((part) => part.text).join("\n");
  expect("the resume on the approval page", { status: response.status(), body },
    (r) => r.status === 200 && r.body?.status === "completed" && text.includes("confirmed the release for Grace Hopper"));
  await page.getByText("Approve sent").waitFor({ timeout: STEP_BOUND });
  await deleteIntegration(page, slug);
  return { executionId, tools: ["echo", "confirm"], text };
}
