package dev.tether.store;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

import dev.tether.identity.Principal;

/**
 * A row's owner and subject as one word without a slash: {@code org}, {@code user} for the daemon's single user
 * ({@value Principal#LOCAL_SUBJECT}, as every user row was before there were others), {@code user:<subject>} with the
 * subject URL-encoded for another. Stored secrets are bound to rows by it, so the rows an older Tether wrote keep
 * opening with the words they were sealed with.
 */
public final class OwnerNames {

    private static final String USER_PREFIX = "user:";

    private OwnerNames() {
    }

    public static String of(Owner owner, String subject) {
        if (owner == Owner.ORG) {
            return "org";
        }
        return subject.equals(Principal.LOCAL_SUBJECT) ? "user" : USER_PREFIX + URLEncoder.encode(subject, StandardCharsets.UTF_8);
    }

    /** The owner and subject of a word {@link #of} made; empty for anything else. */
    public static Optional<Owned> parse(String word) {
        if (word.equals("org")) {
            return Optional.of(new Owned(Owner.ORG, ""));
        }
        if (word.equals("user")) {
            return Optional.of(new Owned(Owner.USER, Principal.LOCAL_SUBJECT));
        }
        if (word.startsWith(USER_PREFIX) && word.length() > USER_PREFIX.length()) {
            return Optional.of(new Owned(Owner.USER, URLDecoder.decode(word.substring(USER_PREFIX.length()), StandardCharsets.UTF_8)));
        }
        return Optional.empty();
    }

    public record Owned(Owner owner, String subject) {
    }
}
