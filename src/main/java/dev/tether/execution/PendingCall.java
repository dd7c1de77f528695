package dev.tether.execution;

import org.graalvm.polyglot.Value;
import org.jspecify.annotations.Nullable;

/**
 * A {@code tools.…(args)} call the code made and awaits. Its resolve/reject functions belong to the execution's
 * context and may only be called under the execution's lock.
 *
 * @param ordinal     the call's place among the calls the code made, from 0: what its journal names it by
 * @param address     {@code tools.<integration>.<owner>.<connection>.<tool>}
 * @param argsJson    the arguments as compact JSON, null when none were given
 * @param argsPreview the arguments as {@code JSON.stringify(args ?? {}, null, 2)}
 * @param approval    what the user is asked when the call waits for approval, null otherwise
 * @param approved    the user accepted this call already
 * @param elicitation the server's question this running call waits on, null otherwise
 */
record PendingCall(int ordinal, String address, @Nullable String argsJson, String argsPreview, Value resolve, Value reject,
        @Nullable String approval, boolean approved, @Nullable Elicitation elicitation) {

    /** The address without {@code tools.}, as Executor's messages and policy patterns name a tool. */
    String path() {
        return address.startsWith("tools.") ? address.substring("tools.".length()) : address;
    }

    PendingCall asking(String question) {
        return new PendingCall(ordinal, address, argsJson, argsPreview, resolve, reject, question, false, null);
    }

    /** The running call, waiting on its server's question. */
    PendingCall eliciting(Elicitation question) {
        return new PendingCall(ordinal, address, argsJson, argsPreview, resolve, reject, null, approved, question);
    }

    /** Whether {@code other} is this same call of the code, asking or not. */
    boolean same(PendingCall other) {
        return resolve == other.resolve;
    }

    PendingCall approve() {
        return new PendingCall(ordinal, address, argsJson, argsPreview, resolve, reject, approval, true, null);
    }
}
