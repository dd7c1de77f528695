package dev.tether.oauth;

import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * An OAuth operation failed in a way the user can act on, tagged as Executor tags it: {@code OAuthProbeError},
 * {@code OAuthRegisterDynamicError}, {@code OAuthStartError}, {@code OAuthCompleteError}. The message never
 * carries a token, code or secret.
 */
public final class OAuthException extends RuntimeException {

    public static final String PROBE = "OAuthProbeError";
    public static final String REGISTER_DYNAMIC = "OAuthRegisterDynamicError";
    public static final String START = "OAuthStartError";
    public static final String COMPLETE = "OAuthCompleteError";

    private final String tag;
    private final Optional<Boolean> restartRequired;

    OAuthException(String tag, @Nullable String message) {
        this(tag, message, Optional.empty());
    }

    OAuthException(String tag, @Nullable String message, Optional<Boolean> restartRequired) {
        super(message);
        this.tag = tag;
        this.restartRequired = restartRequired;
    }

    public String tag() {
        return tag;
    }

    /** For {@code OAuthCompleteError}: whether the flow must start over (the code or session is spent). */
    public Optional<Boolean> restartRequired() {
        return restartRequired;
    }
}
