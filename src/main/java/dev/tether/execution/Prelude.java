package dev.tether.execution;

import org.graalvm.polyglot.Source;

/**
 * The JavaScript that every execution's context runs before the code: it removes GraalJS's shell globals,
 * installs {@code console} and the {@code tools} proxy, has {@code Date} and {@code Math.random()} ask the host when the
 * execution keeps a journal (which records what they answer, so that a replay gets the same: {@link Journal}), and
 * answers a function that runs the code and reports how it settled. The host functions it is given, and the built-ins it uses ({@code JSON}, {@code String}), are taken
 * before the code runs and never leave its closure: code that replaces them changes nothing here.
 */
final class Prelude {

    static final Source SOURCE = Source.newBuilder("js", """
            (function (invoke, log, settle, clock, randomOf) {
              'use strict';
              for (const name of ['Java', 'Graal', 'Polyglot', 'Packages', 'java', 'javax', 'print', 'printErr', 'load',
                  'loadWithNewGlobal', 'console', 'quit', 'exit', 'read', 'readline', 'readbuffer']) {
                try { delete globalThis[name]; } catch (e) { /* not configurable: the context refuses it anyway */ }
              }
              const stringify = JSON.stringify;
              const parse = JSON.parse;
              const text = String;
              const ProxyOf = Proxy;
              const PromiseOf = Promise;
              const ErrorOf = Error;
              const freeze = Object.freeze;
              const defineProperty = Object.defineProperty;
              const apply = Reflect.apply;
              const then = Promise.prototype.then;
              const formatArg = (value) => {
                if (typeof value === 'string') return value;
                try { return stringify(value); } catch (e) { return text(value); }
              };
              const console = {};
              for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
                console[level] = (...args) => {
                  const problem = log(level, args.map(formatArg).join(' '));
                  if (problem) throw new ErrorOf(problem);
                };
              }
              const define = (name, value) => defineProperty(globalThis, name,
                  { value, writable: false, enumerable: false, configurable: false });
              define('console', freeze(console));
              // Date and Math.random as the host answers them (and records: a replay reads the same), when it does: Date()
              // and new Date() without arguments and Date.now() read the host's clock; everything else is the built-in Date,
              // whose prototype they share. Without a journal, the built-ins as they are.
              if (clock !== null) {
                const DateOf = Date;
                const construct = Reflect.construct;
                const dateText = DateOf.prototype.toString;
                const TimedDate = function Date(...args) {
                  if (new.target === undefined) return apply(dateText, construct(DateOf, [clock()]), []);
                  return construct(DateOf, args.length === 0 ? [clock()] : args, new.target);
                };
                defineProperty(TimedDate, 'length', { value: 7 });
                defineProperty(TimedDate, 'prototype', { value: DateOf.prototype, writable: false, enumerable: false, configurable: false });
                for (const name of ['parse', 'UTC']) {
                  defineProperty(TimedDate, name, { value: DateOf[name], writable: true, enumerable: false, configurable: true });
                }
                defineProperty(TimedDate, 'now', { value: function now() { return clock(); }, writable: true, enumerable: false, configurable: true });
                defineProperty(DateOf.prototype, 'constructor', { value: TimedDate, writable: true, enumerable: false, configurable: true });
                defineProperty(globalThis, 'Date', { value: TimedDate, writable: true, enumerable: false, configurable: true });
                defineProperty(Math, 'random', { value: function random() { return randomOf(); }, writable: true, enumerable: false, configurable: true });
              }
              define('fetch', () => { throw new ErrorOf('fetch is disabled in the sandbox: reach services through tools.*'); });
              const makeTools = (path) => new ProxyOf(() => undefined, {
                get(target, prop) {
                  if (prop === 'then' || typeof prop === 'symbol') return undefined;
                  return makeTools([...path, text(prop)]);
                },
                ownKeys() { return []; },
                getOwnPropertyDescriptor() { return undefined; },
                apply(target, self, args) {
                  if (path.length === 0) throw new ErrorOf('Tool path missing in invocation');
                  const input = args[0];
                  const compact = input === undefined ? null : stringify(input);
                  const pretty = stringify(input ?? {}, null, 2) ?? 'null';
                  const call = new PromiseOf((resolve, reject) => {
                    const refused = invoke('tools.' + path.join('.'), compact ?? null, pretty, resolve,
                        (message) => reject(new ErrorOf(message)));
                    if (refused) reject(new ErrorOf(refused));
                  });
                  return apply(then, call, [(raw) => raw == null ? undefined : parse(raw)]);
                },
              });
              define('tools', makeTools([]));
              const errorText = (e) => {
                try {
                  return 'Error: ' + (e !== null && typeof e === 'object' && typeof e.message === 'string' && e.message
                      ? e.message : text(e));
                } catch (unprintable) {
                  return 'Error: the code threw a value that cannot be read as text';
                }
              };
              return (run) => {
                // The result leaves the sandbox as the value itself: Tether writes its JSON (ResultClone).
                apply(then, run(), [(value) => settle(true, value, null), (e) => settle(false, null, errorText(e))]);
              };
            })
            """, "tether-prelude.js").buildLiteral();

    private Prelude() {
    }
}
