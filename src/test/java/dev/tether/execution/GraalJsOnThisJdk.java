package dev.tether.execution;

import org.graalvm.polyglot.Context;

/**
 * Runs JavaScript through the daemon's own engine in a JVM of its own, whichever Java runs it, and prints the answer:
 * what {@link TruffleOnNewerJdksTest} starts on Java 22 or later, where GraalJS 23.1 works only once
 * {@link TruffleOnNewerJdks} has adapted Truffle.
 */
public final class GraalJsOnThisJdk {

    private GraalJsOnThisJdk() {
    }

    public static void main(String[] args) {
        try (Context context = new JsEngine(ExecutionProperties.defaults()).newContext()) {
            System.out.println("java " + Runtime.version().feature() + ": " + context.eval("js", "6 * 7").asInt());
        }
    }
}
