package dev.tether.users;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.jwt.JwtException;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import dev.tether.identity.Audit;
import dev.tether.identity.AuditEvent;
import dev.tether.identity.Principal;
import dev.tether.identity.Role;
import dev.tether.identity.Via;
import dev.tether.store.SignedInUsers;

/**
 * Asks the OIDC provider, every {@code tether.identity.oidc.revalidate}, whether each signed-in user may still come in:
 * their refresh token is renewed, and a refusal ({@code invalid_grant}: the user was disabled, deleted, or signed out
 * everywhere) marks them disabled, which stops their API tokens, sessions and JWTs on every replica within
 * {@code tether.identity.token-recheck}. A renewal brings the provider's current role. Each user is checked by one replica
 * (the store hands each out once per interval). While the provider cannot be asked, users keep what they had, and the
 * log says so.
 */
@Component
final class UserRevalidation implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(UserRevalidation.class);
    private static final int BATCH = 100;

    private final IdentityProperties properties;
    private final OidcProvider provider;
    private final OidcPrincipals principals;
    private final SignedInUsers users;
    private final Audit audit;
    private volatile @Nullable Disposable running;

    UserRevalidation(IdentityProperties properties, OidcProvider provider, OidcPrincipals principals, SignedInUsers users, Audit audit) {
        this.properties = properties;
        this.provider = provider;
        this.principals = principals;
        this.users = users;
        this.audit = audit;
    }

    /** A pass: every user whose turn it is. */
    Mono<Void> pass() {
        return users.due(properties.oidc().revalidate(), BATCH).concatMap(this::check).then();
    }

    private Mono<Void> check(SignedInUsers.Due due) {
        Principal daemon = Principal.daemonFor(properties.tenant(), due.subject());
        return provider.refresh(due.refreshToken())
                .flatMap(tokens -> provider.accessToken(tokens.accessToken()).map(Jwt::getClaims).map(principals::role)
                        .onErrorResume(JwtException.class, notOurs -> Mono.just(Role.VIEWER))
                        .flatMap(role -> users.stillAllowed(due.subject(), role, tokens.refreshToken())))
                .onErrorResume(OidcProvider.RefusedException.class, refused -> {
                    String reason = "the provider refused to renew the user's token (" + refused.error() + ") at " + Instant.now();
                    log.info("user {} is no longer allowed in: {}", due.subject(), reason);
                    audit.record(new AuditEvent(Instant.now(), new Principal(properties.tenant(), due.subject(), Role.VIEWER, Via.DAEMON, null, null),
                            "user.disabled", due.subject(), "ok", null, refused.error()));
                    return users.disabled(due.subject(), reason);
                })
                .onErrorResume(OidcProvider.UnavailableException.class, down -> {
                    log.warn("could not ask the OIDC provider about user {}; they keep their access until it answers: {}", due.subject(),
                            down.getMessage());
                    return Mono.empty();
                })
                .doFinally(signal -> principals.forget(due.subject()))
                .contextWrite(dev.tether.identity.Principals.as(daemon));
    }

    @Override
    public void start() {
        if (properties.mode() != IdentityProperties.Mode.OIDC) {
            return;
        }
        // A few looks per interval, so that a user's check is never much later than its turn.
        Duration tick = properties.oidc().revalidate().dividedBy(4);
        tick = tick.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : tick;
        running = Flux.interval(tick, tick, Schedulers.parallel())
                .onBackpressureDrop()
                .concatMap(look -> pass().onErrorResume(failed -> {
                    log.warn("the revalidation of signed-in users failed, it goes on at the next look: {}", failed.toString());
                    return Mono.empty();
                }), 1)
                .subscribe(null, failed -> log.error("the revalidation of signed-in users stopped", failed));
    }

    @Override
    public void stop() {
        Disposable pass = running;
        if (pass != null) {
            pass.dispose();
        }
        running = null;
    }

    @Override
    public boolean isRunning() {
        return running != null;
    }
}
