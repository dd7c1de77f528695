// The desktop-app acceptance run, started by dev.tether.webui.DesktopAppBrowserIT inside a network namespace of its
// own (Chromium aborts requests with ERR_NETWORK_CHANGED whenever Docker adds or removes an interface, and the tests
// start containers all the time; a namespace holding only loopback sees none of that).
//
//   node run.mjs <config.json>
//
// It starts the real `executor web` (own HOME) and copies its web UI into a directory; then, side by side, walks that
// UI on the real daemon, reproduces the refresh storm there and stops it, and launches bin/executor-sidecar as the
// desktop app does (EXECUTOR_* environment, a password, the copied UI) and does the same on Tether, through HTTP Basic
// auth. What
// each run saw goes to config.output as JSON; the JUnit test judges it and counts what was left behind. On Tether it
// then proves a pause survives kill -9 of the sidecar, and answers a 2026-07-28-only server's question on /resume.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { durablePause, modernQuestion, record, walk, storm } from "./walk.mjs";
import { CHROMIUM_FLAGS, awaitAnswer, readyLine, sleep, start as startIn, stop } from "./servers.mjs";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const here = dirname(fileURLToPath(import.meta.url));
const log = (line) => console.log(`[browser ${new Date().toISOString().slice(11, 23)}] ${line}`);
const start = (name, command, args, env) => startIn(config.workDir, name, command, args, env);

/** One browser context on a server's origin, its credentials sent with every request as the desktop app does. */
async function session(browser, origin, authorization) {
  const context = await browser.newContext({ baseURL: origin, extraHTTPHeaders: { authorization } });
  context.setDefaultTimeout(20_000);
  // The UI links Google Fonts; there is no network here, so they are answered empty (on both servers alike).
  await context.route((url) => url.origin !== origin, (route) => route.fulfill({ status: 200, body: "" }));
  return context;
}

async function runOn(browser, name, origin, authorization) {
  const result = { name, origin, walk: null, storm: null, error: null };
  const context = await session(browser, origin, authorization);
  try {
    const page = await context.newPage();
    const seen = record(page);
    const shot = (step) => page.screenshot({ path: join(config.workDir, `${name}-${step.replace(/[^a-z0-9]+/gi, "-")}.png`) });
    try {
      const failed = await walk(page, { command: "docker", args: config.fixtureArgs(`${config.runId}-${name}-walk`),
        everything: { command: config.everything[0], args: config.everything.slice(1).join(" ") }, log, shot, daemon: name });
      result.walk = { ok: failed.length === 0, failed };
    } catch (error) {
      result.walk = { ok: false, error: String(error?.message ?? error).split("\n")[0] };
      await page.screenshot({ path: join(config.workDir, `${name}-walk-failure.png`) }).catch(() => {});
      log(`${name}: walk failed: ${result.walk.error}`);
    }
    await seen.settled();
    Object.assign(result, { calls: seen.calls, consoleErrors: seen.consoleErrors, pageErrors: seen.pageErrors });
    const stormPage = await context.newPage();
    const stormLabel = `${config.runId}-${name}-storm`;
    try {
      await storm(stormPage, {
        command: "docker", argsFor: (i) => config.fixtureArgs(stormLabel), count: config.stormIntegrations,
        rounds: config.stormRounds, abandonAfterMs: config.abandonAfterMs, log,
      });
      result.storm = { ok: true, label: stormLabel };
    } catch (error) {
      result.storm = { ok: false, label: stormLabel, error: String(error?.message ?? error).split("\n")[0] };
      await stormPage.screenshot({ path: join(config.workDir, `${name}-storm-failure.png`) }).catch(() => {});
      log(`${name}: storm failed: ${result.storm.error}`);
    }
  } finally {
    await context.close();
  }
  return result;
}

/** Containers with the storm's label, and `docker run` clients naming it, as the OS and the engine see them. */
function leftovers(label) {
  const containers = execFileSync("docker", ["ps", "-aq", "--filter", `label=dev.tether.browser=${label}`], { encoding: "utf8" })
    .split("\n").filter(Boolean);
  const clients = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" }).split("\n")
    .filter((line) => line.includes(`dev.tether.browser=${label}`) && /\bdocker\s+run\b/.test(line));
  return { containers: containers.length, clients: clients.length };
}

async function settledLeftovers(label, boundMs) {
  const deadline = Date.now() + boundMs;
  let left = leftovers(label);
  while ((left.containers > 0 || left.clients > 0) && Date.now() < deadline) {
    await sleep(500);
    left = leftovers(label);
  }
  return left;
}

/**
 * Starts src/test/clients/mcp-stateless-server.mjs here, in the run's network namespace (a server the test started
 * outside it would be out of the sidecar's reach), walks modernQuestion against it, and checks from the server's own
 * record that Tether never tried the 2025 handshake on it.
 */
async function modern(browser, origin, authorization) {
  const server = start("stateless-server", process.execPath, [config.statelessServer], process.env);
  const context = await session(browser, origin, authorization);
  const printed = [];
  try {
    const port = await new Promise((resolve, reject) => {
      let pending = "";
      server.stdout.on("data", (chunk) => {
        pending += chunk;
        const lines = pending.split("\n");
        pending = lines.pop();
        for (const line of lines) {
          printed.push(line);
          if (line.startsWith('{"listening"')) resolve(JSON.parse(line).listening);
        }
      });
      server.exited.then((end) => reject(new Error(`the server exited before listening: ${JSON.stringify(end)}`)));
      const bound = setTimeout(() => reject(new Error("the server did not listen within 30 s")), 30_000);
      server.stdout.once("data", () => clearTimeout(bound));
    });
    const seen = await modernQuestion(await context.newPage(), { endpoint: `http://127.0.0.1:${port}/mcp`, log });
    const asked = printed.filter((line) => line.includes('"method"'));
    if (asked.some((line) => line.includes('"era":"legacy"')) || !asked.some((line) => line.includes('"server/discover"'))) {
      throw new Error(`what the server was asked: ${asked}`);
    }
    return { ok: true, ...seen, asked: asked.length };
  } catch (error) {
    const failed = { ok: false, error: String(error?.message ?? error).split("\n")[0] };
    log(`tether: the 2026-07-28 server's question on the approval page failed: ${failed.error}`);
    return failed;
  } finally {
    await context.close();
    await stop(server);
  }
}

// The fixture's docker command line, with a label per run and phase to count by.
config.fixtureArgs = (label) => ["run", "-i", "--rm", "--label", "dev.tether.test=true", "--label",
  `dev.tether.browser=${label}`, config.image, "node", "/app/fixture-mcp-server.js", "--tools=3"].join(" ");

mkdirSync(config.workDir, { recursive: true });
const output = { executor: null, tether: null, uiFiles: 0, ready: null };
const browser = await chromium.launch({ executablePath: config.chromium, args: CHROMIUM_FLAGS, headless: true });
try {
  // ---- the real Executor: its UI copied; the sidecar needs it to start ------------------------------------------
  const executorHome = join(config.workDir, "executor-home");
  mkdirSync(join(config.workDir, "executor-scope"), { recursive: true });
  mkdirSync(executorHome, { recursive: true });
  const executorEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("EXECUTOR_")));
  const executor = start("executor", config.executorCli, ["web", "--port", String(config.executorPort), "--hostname",
    "127.0.0.1", "--auth-token", config.token, "--scope", join(config.workDir, "executor-scope")],
  { ...executorEnv, HOME: executorHome });
  const executorOrigin = `http://127.0.0.1:${config.executorPort}`;
  try {
    await awaitAnswer(`${executorOrigin}/api/integrations`, { authorization: `Bearer ${config.token}` }, 90_000, executor);
    const mirrored = JSON.parse(execFileSync("node", [join(here, "mirror-ui.mjs"), executorOrigin, config.token, config.uiDir],
      { encoding: "utf8" }));
    output.uiFiles = mirrored.copied;
    log(`copied Executor's web UI: ${mirrored.copied} files`);
  } catch (error) {
    await stop(executor);
    throw error;
  }

  // Executor's walk and storm, and everything on Tether, side by side: each on its own daemon, in its own browser
  // context, counting its own label, so neither sees the other's work; one after the other, the run took twice as
  // long on a machine that mostly waits for the daemons and Docker.
  const onExecutor = async () => {
    try {
      if (!config.skipExecutor) {
        output.executor = await runOn(browser, "executor", executorOrigin, `Bearer ${config.token}`);
        await sleep(config.settleMs);
        output.executor.left = leftovers(output.executor.storm.label);
        log(`executor: left after the storm: ${JSON.stringify(output.executor.left)}`);
      }
    } finally {
      await stop(executor);
    }
  };

  // ---- Tether as the desktop app's sidecar ----------------------------------------------------------------------
  const onTether = async () => {
    const dataDir = join(config.workDir, "sidecar-data");
    const sidecarEnv = {
      ...executorEnv, HOME: join(config.workDir, "sidecar-home"),
      EXECUTOR_PORT: String(config.sidecarPort), EXECUTOR_HOST: "127.0.0.1", EXECUTOR_AUTH_PASSWORD: config.password,
      EXECUTOR_CLIENT_DIR: config.uiDir, EXECUTOR_SCOPE_DIR: dataDir, EXECUTOR_DATA_DIR: dataDir,
      EXECUTOR_WEB_BASE_URL: `http://127.0.0.1:${config.sidecarPort}`, EXECUTOR_CLIENT: "desktop",
    };
    const launched = Date.now();
    let sidecar = start("sidecar", config.sidecar, [], sidecarEnv);
    try {
      const port = await readyLine(sidecar, config.readyBoundMs ?? 600_000); // the first start after a build trains bin/tether's cache
      output.ready = { port, afterMs: Date.now() - launched };
      log(`sidecar ready on ${port} after ${output.ready.afterMs} ms`);
      const basic = `Basic ${Buffer.from(`executor:${config.password}`).toString("base64")}`;
      output.tether = await runOn(browser, "tether", `http://127.0.0.1:${port}`, basic);
      output.tether.left = await settledLeftovers(output.tether.storm.label, config.tetherBoundMs);
      log(`tether: left after the storm: ${JSON.stringify(output.tether.left)}`);
      // ---- a paused execution outlives the sidecar: kill -9, the app starts it again, the user approves -----------
      const context = await session(browser, `http://127.0.0.1:${port}`, basic);
      try {
        const page = await context.newPage();
        const restart = async () => {
          sidecar.kill("SIGKILL");
          await sidecar.exited;
          sidecar = start("sidecar-restarted", config.sidecar, [], sidecarEnv);
          await readyLine(sidecar, config.readyBoundMs ?? 600_000);
        };
        output.tether.durable = { ok: true, ...await durablePause(page, { command: "docker",
          args: config.fixtureArgs(`${config.runId}-tether-durable`), restart, log }) };
      } catch (error) {
        output.tether.durable = { ok: false, error: String(error?.message ?? error).split("\n")[0] };
        log(`tether: the paused execution across a restart failed: ${output.tether.durable.error}`);
      } finally {
        await context.close();
      }
      // ---- a remote server of MCP 2026-07-28 only: its question answered on the approval page ---------------------
      output.tether.modern = await modern(browser, `http://127.0.0.1:${port}`, basic);
    } finally {
      output.sidecarExit = await stop(sidecar);
    }
  };

  const parts = await Promise.allSettled([onExecutor(), onTether()]);
  const failed = parts.find((part) => part.status === "rejected");
  if (failed) throw failed.reason;
} finally {
  await browser.close();
  writeFileSync(config.output, JSON.stringify(output, null, 2));
}
