// The server processes of the browser runs (run.mjs, oauth-walk.mjs): started with their output in a log file,
// awaited until they answer, stopped with SIGTERM and, past a bound, SIGKILL.
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { join } from "node:path";

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export const CHROMIUM_FLAGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"];

/** Starts a server process; answers it with its output going to <logDir>/<name>.log. */
export function start(logDir, name, command, args, env) {
  const out = createWriteStream(join(logDir, `${name}.log`));
  const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"], detached: false });
  child.stdout.pipe(out);
  child.stderr.pipe(out);
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
