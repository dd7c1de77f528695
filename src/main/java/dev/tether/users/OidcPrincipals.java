package dev.tether.users;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.jwt.JwtException;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.identity.Principal;
import dev.tether.identity.Role;
import dev.tether.identity.Via;
import dev.tether.store.SignedInUsers;

/**
 * Principals of {@code oidc} mode: from an agent's JWT (the provider's signature, issuer, expiry and the configured
 * audience, checked by {@link OidcProvider}), and the standing of a user Tether knows from a sign-in. A user the
 * revalidation found disabled at the provider gets in with nothing, whatever credential it still holds; a user's API
 * tokens and sessions act at most at the role the provider last gave it. What was read of a user is trusted for
 * {@code tether.identity.token-recheck}.
 */
@Component
final class OidcPrincipals {

    private static final Logger log = LoggerFactory.getLogger(OidcPrincipals.class);
    private static final int KNOWN = 10_000;

    private record Standing(Optional<SignedInUsers.User> user, long readAt) {
    }

    private final OidcProvider provider;
    private final SignedInUsers users;
    private final IdentityProperties properties;
    private final Clock clock = Clock.systemUTC();
    private final Map<String, Standing> standings = new ConcurrentHashMap<>();

    OidcPrincipals(OidcProvider provider, SignedInUsers users, IdentityProperties properties) {
        this.provider = provider;
        this.users = users;
        this.properties = properties;
    }

    /** Whether a credential looks like a JWT (three base64url parts), and is then this class's to check. */
    static boolean looksLikeJwt(String credential) {
        int first = credential.indexOf('.');
        int second = first < 0 ? -1 : credential.indexOf('.', first + 1);
        return first > 0 && second > first + 1 && credential.indexOf('.', second + 1) < 0 && credential.length() > second + 1;
    }

    /**
     * The principal of an agent's JWT; empty for one that does not pass (a bad signature, another issuer or audience, an
     * expired one) or whose user is disabled. The provider out of reach is an {@link OidcProvider.UnavailableException}.
     */
    Mono<Optional<Principal>> fromJwt(String token) {
        return provider.accessToken(token)
                .map(jwt -> principal(jwt.getClaims(), Via.JWT, client(jwt)))
                .flatMap(this::standing)
                .onErrorResume(JwtException.class, refused -> {
                    log.debug("a JWT was refused: {}", refused.getMessage());
                    return Mono.just(Optional.empty());
                });
    }

    /** The principal a provider's token (claims) names, at the role its claims give. */
    Principal principal(Map<String, Object> claims, Via via, @Nullable String credential) {
        String subject = String.valueOf(claims.get("sub"));
        Object name = claims.getOrDefault("preferred_username", claims.get("email"));
        return new Principal(properties.tenant(), subject, role(claims), via, credential, name == null ? null : String.valueOf(name));
    }

    /** The role the token's claims give: the highest of the configured role names it lists, else the default. */
    Role role(Map<String, Object> claims) {
        IdentityProperties.Oidc oidc = properties.oidc();
        List<String> roles = OidcProvider.claimList(claims, oidc.rolesClaim());
        if (roles.contains(oidc.adminRole())) {
            return Role.ADMIN;
        }
        if (roles.contains(oidc.memberRole())) {
            return Role.MEMBER;
        }
        if (roles.contains(oidc.viewerRole())) {
            return Role.VIEWER;
        }
        return oidc.defaultRole();
    }

    private static @Nullable String client(Jwt jwt) {
        Object azp = jwt.getClaims().get("azp");
        return azp == null ? null : "client:" + azp;
    }

    /**
     * The principal as its user stands now: empty when the user is disabled, its role at most the provider's last word
     * for a user Tether knows (a JWT's own claims are the provider's word already).
     */
    Mono<Optional<Principal>> standing(Principal principal) {
        return user(principal.subject()).map(known -> {
            if (known.map(SignedInUsers.User::disabled).orElse(false)) {
                return Optional.<Principal>empty();
            }
            Role role = principal.via() == Via.JWT ? principal.role()
                    : known.map(user -> lower(user.role(), principal.role())).orElse(principal.role());
            return Optional.of(principal.withRole(role));
        });
    }

    /** A user as last read, read again once older than the recheck bound. */
    Mono<Optional<SignedInUsers.User>> user(String subject) {
        long now = clock.millis();
        Standing known = standings.get(subject);
        if (known != null && now - known.readAt() < properties.tokenRecheck().toMillis()) {
            return Mono.just(known.user());
        }
        return users.find(subject).map(Optional::of).defaultIfEmpty(Optional.empty()).doOnNext(read -> {
            if (standings.size() >= KNOWN) {
                standings.clear();
            }
            standings.put(subject, new Standing(read, now));
        });
    }

    /** Forgets what was read of a user: the revalidation on this replica just changed it. */
    void forget(String subject) {
        standings.remove(subject);
    }

    private static Role lower(Role one, Role other) {
        return one.atLeast(other) ? other : one;
    }
}
