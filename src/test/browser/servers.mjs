// The server processes of the browser runs (run.mjs, oauth-walk.mjs, http-sources-walk.mjs): started with their
// output in a log file, awaited until they answer, stopped with SIGTERM and, past a bound, SIGKILL; and the walk of
// one UI flow on the real Executor and, beside it, on Tether as the desktop app's sidecar.
import { execFileSync, spawn } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * A browser context on a daemon's origin, its credentials sent as the desktop app sends them, each step bounded by
 * stepBound ms. What the UI links beyond loopback (Google Fonts, presets' favicons) is unreachable here: answered empty.
 */
export async function browserSession(browser, origin, authorization, stepBound) {
  const context = await browser.newContext({ baseURL: origin, extraHTTPHeaders: { authorization } });
  context.setDefaultTimeout(stepBound);
  await context.route((url) => !LOOPBACK.has(url.hostname), (route) => route.fulfill({ status: 200, body: "" }));
  return context;
}

/**
 * The step runner of a walk on one daemon: each step recorded in steps, a failed one with its first error line and a
 * screenshot in workDir, and the walk going on.
 */
export function stepsOf(page, name, steps, workDir, log) {
  return async (title, action) => {
    log(`${name}: step: ${title}`);
    try {
      await action();
      steps.push({ step: title, ok: true });
    } catch (error) {
      const message = String(error?.message ?? error).split("\n")[0];
      steps.push({ step: title, ok: false, error: message });
      log(`${name}: step failed: ${title}: ${message}`);
      await page.screenshot({ path: join(workDir, `${name}-${title.replace(/[^a-z0-9]+/gi, "-")}.png`) }).catch(() => {});
    }
  };
}

export const CHROMIUM_FLAGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"];

/** Starts a server process; answers it with its output going to <logDir>/<name>.log. */
export function start(logDir, name, command, args, env) {
  const out = createWriteStream(join(logDir, `${name}.log`));
  const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"], detached: false });
  // Two sources into one file: neither may end it (a pipe ends its destination when its source ends, and the other's
  // next chunk would then be a write after end, which crashes the run); the child's close, after both, does.
  child.stdout.pipe(out, { end: false });
  child.stderr.pipe(out, { end: false });
  child.once("close", () => out.end());
  child.exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  return child;
}

export async function stop(child, boundMs = 15_000) {
  if (child.exitCode !== null || child.signalCode !== null) return child.exited;
  child.kill("SIGTERM");
  const ended = await Promise.race([child.exited, sleep(boundMs).then(() => null)]);
  if (ended) return ended;
  child.kill("SIGKILL");
  return child.exited;
}

/** Resolves once the URL answers the given status (200 unless told), rejects when the child exits or the bound passes. */
export async function awaitAnswer(url, headers, boundMs, child, status = 200) {
  const deadline = Date.now() + boundMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url}: the server exited with ${child.exitCode}`);
    try {
      const response = await fetch(url, { headers });
      if (response.status === status) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${url} did not answer ${status} within ${boundMs} ms`);
}

/** Resolves with the port of the first EXECUTOR_READY:<port> line, as the desktop app reads it. */
export function readyLine(child, boundMs) {
  return new Promise((resolve, reject) => {
    let buffer = "";
    const timer = setTimeout(() => reject(new Error(`no EXECUTOR_READY line within ${boundMs} ms`)), boundMs);
    child.stdout.on("data", (chunk) => {
      buffer += chunk.toString("utf8");
      const match = buffer.match(/EXECUTOR_READY:(\d+)/);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the sidecar exited with ${code} before its ready line`));
    });
  });
}

/**
 * Walks one flow (walkOn(browser, name, origin, authorization)) on the real `executor web`, whose web UI it copies
 * into config.uiDir (unless config.skipExecutor, the UI is still copied), and on Tether started as the desktop app's
 * sidecar on that UI with HTTP Basic auth; each walk's result goes into output.executor and output.tether as it ends.
 * Once the UI is copied, the two go side by side: each on its own daemon and in its own browser context, so neither
 * sees the other's work, and the sidecar starts while Executor is walked instead of after it.
 */
export async function walkExecutorAndTether(config, env, browser, walkOn, output, log) {
  const executorHome = join(config.workDir, "executor-home");
  mkdirSync(join(config.workDir, "executor-scope"), { recursive: true });
  mkdirSync(executorHome, { recursive: true });
  const executor = start(config.workDir, "executor", config.executorCli, ["web", "--port", String(config.executorPort),
    "--hostname", "127.0.0.1", "--auth-token", config.token, "--scope", join(config.workDir, "executor-scope")],
    { ...env, HOME: executorHome });
  const executorOrigin = `http://127.0.0.1:${config.executorPort}`;
  try {
    await awaitAnswer(`${executorOrigin}/api/integrations`, { authorization: `Bearer ${config.token}` }, 90_000, executor);
    const mirrored = JSON.parse(execFileSync("node", [join(here, "mirror-ui.mjs"), executorOrigin, config.token, config.uiDir],
      { encoding: "utf8" }));
    log(`copied Executor's web UI: ${mirrored.copied} files`);
  } catch (error) {
    await stop(executor);
    throw error;
  }
  const onExecutor = async () => {
    try {
      if (!config.skipExecutor) output.executor = await walkOn(browser, "executor", executorOrigin, `Bearer ${config.token}`);
    } finally {
      await stop(executor);
    }
  };
  const onTether = async () => {
    const dataDir = join(config.workDir, "sidecar-data");
    const sidecar = start(config.workDir, "sidecar", config.sidecar, [], {
      ...env, HOME: join(config.workDir, "sidecar-home"), TETHER_AOT: "off",
      EXECUTOR_PORT: String(config.sidecarPort), EXECUTOR_HOST: "127.0.0.1", EXECUTOR_AUTH_PASSWORD: config.password,
      EXECUTOR_CLIENT_DIR: config.uiDir, EXECUTOR_SCOPE_DIR: dataDir, EXECUTOR_DATA_DIR: dataDir, EXECUTOR_CLIENT: "desktop",
    });
    try {
      // Only a failure waits this long: the sidecar started in 247 s at load 25 on two cores shared with other tests.
      const port = await readyLine(sidecar, 300_000);
      const basic = `Basic ${Buffer.from(`executor:${config.password}`).toString("base64")}`;
      output.tether = await walkOn(browser, "tether", `http://127.0.0.1:${port}`, basic);
    } finally {
      await stop(sidecar);
    }
  };
  const parts = await Promise.allSettled([onExecutor(), onTether()]);
  const failed = parts.find((part) => part.status === "rejected");
  if (failed) throw failed.reason;
}
