package dev.tether.execution;

import org.graalvm.polyglot.PolyglotException;
import org.graalvm.polyglot.Value;
import org.jspecify.annotations.Nullable;

/**
 * How the code of an execution ended: its result as JSON and text, or an error text, worded as Executor words it.
 */
record Settled(boolean ok, @Nullable String resultJson, @Nullable String resultText, @Nullable String error) {

    static Settled failed(String error) {
        return new Settled(false, null, null, error);
    }

    /**
     * The code's value, written by Tether ({@link ResultClone}) within {@code maxOutputBytes}. A value Tether will not
     * write, or whose getter or proxy throws, ends the code with why; a cancel, an interrupt or a heap that ran out
     * is the execution's end, not the code's, and is thrown on.
     */
    static Settled written(Value value, long maxOutputBytes) {
        try {
            ResultClone.Written result = ResultClone.write(value, maxOutputBytes);
            return new Settled(true, result.json(), result.text(), null);
        }
        catch (ResultClone.Refused refused) {
            return failed("Error: " + refused.getMessage());
        }
        catch (PolyglotException thrown) {
            if (thrown.isCancelled() || thrown.isResourceExhausted() || thrown.isInterrupted()) {
                throw thrown;
            }
            return failed("Error: " + thrown.getMessage());
        }
    }

    /** Executor words a syntax error {@code <what> (line:column)}, lines counted in the code as sent. */
    static Settled syntaxError(PolyglotException ex) {
        String first = String.valueOf(ex.getMessage()).lines().findFirst().orElse("syntax error");
        String what = first.replaceFirst("^SyntaxError: [^:]*:\\d+:\\d+ ", "");
        var location = ex.getSourceLocation();
        return failed(location == null ? what
                : what + " (" + Math.max(1, location.getStartLine() - 1) + ":" + location.getStartColumn() + ")");
    }
}
