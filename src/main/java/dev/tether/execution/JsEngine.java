package dev.tether.execution;

import org.graalvm.polyglot.Context;
import org.graalvm.polyglot.Engine;
import org.graalvm.polyglot.EnvironmentAccess;
import org.graalvm.polyglot.HostAccess;
import org.graalvm.polyglot.PolyglotAccess;
import org.graalvm.polyglot.Source;
import org.graalvm.polyglot.io.IOAccess;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * The shared GraalJS engine and the sandboxed contexts made from it. The engine (and GraalJS's classes with it)
 * is built on the first execution, never at start-up: a daemon that runs no code pays nothing for it.
 */
@Component
final class JsEngine implements DisposableBean {

    private final ExecutionProperties properties;
    private volatile @Nullable Engine engine;
    private @Nullable JsUnavailableException unavailable;

    JsEngine(ExecutionProperties properties) {
        this.properties = properties;
    }

    /**
     * A context with no host access at all: no Java classes or objects, no files, no network, no processes, no
     * threads, no environment, no other languages. Whoever gets it owns it and must close it.
     */
    Context newContext() {
        return Context.newBuilder("js")
                .engine(engine())
                .allowHostAccess(HostAccess.NONE)
                .allowHostClassLookup(className -> false)
                .allowHostClassLoading(false)
                .allowIO(IOAccess.NONE)
                .allowCreateThread(false)
                .allowCreateProcess(false)
                .allowNativeAccess(false)
                .allowEnvironmentAccess(EnvironmentAccess.NONE)
                .allowPolyglotAccess(PolyglotAccess.NONE)
                .allowExperimentalOptions(true)
                // No shell built-ins (print, load, Java, Graal); console is the sandbox's own.
                .option("js.print", "false")
                .option("js.load", "false")
                .option("js.console", "false")
                .option("js.graal-builtin", "false")
                .option("js.polyglot-builtin", "false")
                .option("js.java-package-globals", "false")
                // A string too long for the output is refused when it is built, not after it filled the heap.
                .option("js.string-length-limit", Integer.toString(properties.maxStringLength()))
                .build();
    }

    /** Parsed once per engine and shared by every context. */
    Source prelude() {
        return Prelude.SOURCE;
    }

    private Engine engine() {
        Engine built = engine;
        if (built == null) {
            synchronized (this) {
                if (unavailable != null) {
                    throw unavailable;
                }
                built = engine;
                if (built == null) {
                    try {
                        TruffleOnNewerJdks.prepare();
                        built = Engine.newBuilder("js")
                                // Tether runs on a stock JDK, where GraalJS interprets without its JIT compiler. That is
                                // expected and fast enough for glue code between tool calls, so the warning is noise.
                                .option("engine.WarnInterpreterOnly", "false")
                                .build();
                    }
                    catch (LinkageError ex) {
                        // Truffle 23.1 (the last line for Java 17) calls an Unsafe method that Java 22 removed, should
                        // TruffleOnNewerJdks not have adapted it. Reactor treats a LinkageError as fatal and would drop
                        // it, leaving the request unanswered: say why.
                        unavailable = new JsUnavailableException("JavaScript is unavailable on Java " + Runtime.version().feature()
                                + ": GraalJS 23.1 runs on Java 17 to 21 ("
                                + ex + ")");
                        throw unavailable;
                    }
                    engine = built;
                }
            }
        }
        return built;
    }

    /** Whether the engine was built: only an execution builds it. */
    boolean built() {
        return engine != null;
    }

    @Override
    public void destroy() {
        Engine built = engine;
        if (built != null) {
            built.close(true);
        }
    }
}
