package dev.tether.store;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.identity.Role;

/**
 * The users who signed in through the OIDC provider, with the refresh token (sealed) by which the provider is asked, from
 * time to time, whether each may still come in. Identity data, not rows a principal owns: read by the users' feature
 * only, never through {@code store.storage.OwnerScope}.
 */
public interface SignedInUsers {

    /** A signed-in user as Tether keeps it; never its refresh token. */
    record User(String subject, Optional<String> name, Optional<String> email, Role role, Instant signedInAt, Instant checkedAt,
            Optional<Instant> disabledAt, Optional<String> disabledReason, boolean revalidated) {

        public boolean disabled() {
            return disabledAt.isPresent();
        }
    }

    /** A user whose turn it is to be checked, and the refresh token to check with. */
    record Due(String subject, String refreshToken) {

        @Override
        public String toString() {
            return "Due[" + subject + ", refresh token ***]";
        }
    }

    /**
     * Records a sign-in: the user's name, role and (when the provider gave one) refresh token, replacing what was kept;
     * a user disabled before is enabled again, since the provider has just let them in.
     */
    Mono<Void> signedIn(String subject, Optional<String> name, Optional<String> email, Role role, Optional<String> refreshToken);

    Mono<User> find(String subject);

    Flux<User> all();

    /**
     * Claims up to {@code limit} users not disabled, with a refresh token, not checked for {@code interval}: each is claimed by
     * one replica only (its check time moves on), which then asks the provider about it.
     */
    Flux<Due> due(Duration interval, int limit);

    /** The provider renewed the user's token: still allowed, at this role, with the new refresh token when one came. */
    Mono<Void> stillAllowed(String subject, Role role, Optional<String> refreshToken);

    /** The provider refused the user's refresh token: disabled (or signed out everywhere), for {@code reason}. */
    Mono<Void> disabled(String subject, String reason);
}
