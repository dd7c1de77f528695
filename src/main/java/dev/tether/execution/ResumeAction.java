package dev.tether.execution;

import java.util.Arrays;
import java.util.Optional;

/** The answer to an approval: run the call, or make it fail in the code (declined or cancelled by the user). */
public enum ResumeAction {
    ACCEPT, DECLINE, CANCEL;

    public static Optional<ResumeAction> parse(String text) {
        return Arrays.stream(values()).filter(action -> action.name().toLowerCase().equals(text)).findFirst();
    }
}
