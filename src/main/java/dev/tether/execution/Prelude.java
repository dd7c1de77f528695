package dev.tether.execution;

import org.graalvm.polyglot.Source;

/**
 * The JavaScript that every execution's context runs before the code: it removes GraalJS's shell globals,
 * installs {@code console} and the {@code tools} proxy, and answers a function that runs the code and reports how
 * it settled. The host functions it is given never leave its closure.
 */
final class Prelude {

    static final Source SOURCE = Source.newBuilder("js", """
            (function (invoke, log, settle) {
              'use strict';
              for (const name of ['Java', 'Graal', 'Polyglot', 'Packages', 'java', 'javax', 'print', 'printErr', 'load',
                  'loadWithNewGlobal', 'console', 'quit', 'exit', 'read', 'readline', 'readbuffer']) {
                try { delete globalThis[name]; } catch (e) { /* not configurable: the context refuses it anyway */ }
              }
              const formatArg = (value) => {
                if (typeof value === 'string') return value;
                try { return JSON.stringify(value); } catch (e) { return String(value); }
              };
              const console = {};
              for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
                console[level] = (...args) => {
                  const problem = log(level, args.map(formatArg).join(' '));
                  if (problem) throw new Error(problem);
                };
              }
              const define = (name, value) => Object.defineProperty(globalThis, name,
                  { value, writable: false, enumerable: false, configurable: false });
              define('console', Object.freeze(console));
              define('fetch', () => { throw new Error('fetch is disabled in the sandbox: reach services through tools.*'); });
              const makeTools = (path) => new Proxy(() => undefined, {
                get(target, prop) {
                  if (prop === 'then' || typeof prop === 'symbol') return undefined;
                  return makeTools([...path, String(prop)]);
                },
                ownKeys() { return []; },
                getOwnPropertyDescriptor() { return undefined; },
                apply(target, self, args) {
                  if (path.length === 0) throw new Error('Tool path missing in invocation');
                  const input = args[0];
                  const compact = input === undefined ? null : JSON.stringify(input);
                  const pretty = JSON.stringify(input ?? {}, null, 2) ?? 'null';
                  return new Promise((resolve, reject) => invoke('tools.' + path.join('.'), compact ?? null, pretty,
                      resolve, (message) => reject(new Error(message))))
                    .then((raw) => raw == null ? undefined : JSON.parse(raw));
                },
              });
              define('tools', makeTools([]));
              const errorText = (e) => 'Error: ' + (e !== null && typeof e === 'object' && typeof e.message === 'string'
                  && e.message ? e.message : String(e));
              return (run) => {
                run().then((value) => {
                  let compact;
                  let text;
                  try {
                    // The result leaves the sandbox as JSON (as in Executor), and the text is written from that JSON:
                    // a Date reads as its ISO string, not as a quoted one.
                    compact = value == null ? 'null' : (JSON.stringify(value) ?? 'null');
                    const plain = JSON.parse(compact);
                    text = plain == null ? null : typeof plain === 'string' ? plain : JSON.stringify(plain, null, 2);
                  } catch (e) {
                    settle(false, null, null, errorText(e));
                    return;
                  }
                  settle(true, compact, text, null);
                }, (e) => settle(false, null, null, errorText(e)));
              };
            })
            """, "tether-prelude.js").buildLiteral();

    private Prelude() {
    }
}
