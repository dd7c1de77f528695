package dev.tether.users;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.tether.daemon.PropertyChecks;
import dev.tether.identity.Principal;
import dev.tether.identity.Role;

/**
 * Who may call, and how they prove it.
 *
 * @param mode              {@code local} (default): the daemon's token (and the desktop app's password) is its single user,
 *                          {@value Principal#LOCAL_SUBJECT}, an admin, and personal API tokens name other users; {@code oidc}:
 *                          people sign in through an OpenID Connect provider, agents present its JWTs or personal API tokens
 * @param tenant            the organisation this deployment serves, recorded with every audit event; default {@code default}
 * @param tokenRecheck      how long a replica trusts what it last read of an API token (that it exists, is not revoked or
 *                          expired) before reading it again: the most a revocation takes to reach another replica; default 5 s
 * @param tokenLifetime     how long a new API token lives when its creator names no expiry; default 90 days
 * @param tokenMaxLifetime  the longest an API token may live; default 365 days
 * @param auditRetention    how long audit events are kept; {@code 0} keeps them for ever; default 90 days
 * @param oidc              the provider, in {@code oidc} mode
 */
@ConfigurationProperties("tether.identity")
public record IdentityProperties(Mode mode, String tenant, Duration tokenRecheck, Duration tokenLifetime, Duration tokenMaxLifetime,
        Duration auditRetention, Oidc oidc) {

    /** How callers prove who they are. */
    public enum Mode {
        LOCAL, OIDC
    }

    public IdentityProperties(@Nullable Mode mode, @Nullable String tenant, @Nullable Duration tokenRecheck,
            @Nullable Duration tokenLifetime, @Nullable Duration tokenMaxLifetime, @Nullable Duration auditRetention,
            @Nullable Oidc oidc) {
        mode = mode == null ? Mode.LOCAL : mode;
        tenant = tenant == null || tenant.isBlank() ? Principal.DEFAULT_TENANT : tenant.strip();
        tokenRecheck = PropertyChecks.positive("tether.identity.token-recheck", tokenRecheck, Duration.ofSeconds(5));
        tokenLifetime = PropertyChecks.positive("tether.identity.token-lifetime", tokenLifetime, Duration.ofDays(90));
        tokenMaxLifetime = PropertyChecks.positive("tether.identity.token-max-lifetime", tokenMaxLifetime, Duration.ofDays(365));
        if (tokenLifetime.compareTo(tokenMaxLifetime) > 0) {
            throw new IllegalArgumentException("tether.identity.token-lifetime (" + tokenLifetime
                    + ") must not be longer than tether.identity.token-max-lifetime (" + tokenMaxLifetime + ")");
        }
        auditRetention = PropertyChecks.notNegative("tether.identity.audit-retention", auditRetention, Duration.ofDays(90));
        oidc = oidc == null ? new Oidc(null, null, null, null, null, null, null, null, null, null, null, null, null) : oidc;
        if (mode == Mode.OIDC) {
            oidc.requireComplete();
        }
        this.mode = mode;
        this.tenant = tenant;
        this.tokenRecheck = tokenRecheck;
        this.tokenLifetime = tokenLifetime;
        this.tokenMaxLifetime = tokenMaxLifetime;
        this.auditRetention = auditRetention;
        this.oidc = oidc;
    }

    /**
     * The OpenID Connect provider (Keycloak, Okta, Entra ID, …).
     *
     * @param issuer        its issuer URL; its {@code /.well-known/openid-configuration} is read at first use
     * @param clientId      Tether's client at the provider, for the web UI's sign-in
     * @param clientSecret  that client's secret; none for a public client
     * @param audience      the {@code aud} a JWT must carry to be accepted; default the client id
     * @param rolesClaim    where a token lists its roles, a dotted path into its claims; default {@code realm_access.roles}
     *                      (Keycloak's realm roles)
     * @param adminRole     the role name that makes an admin; default {@code tether-admin}
     * @param memberRole    the role name that makes a member; default {@code tether-member}
     * @param viewerRole    the role name that makes a viewer; default {@code tether-viewer}
     * @param defaultRole   the role of a signed-in user whose token names none of the three; default {@code viewer}
     * @param scopes        asked for at sign-in; default {@code openid profile email offline_access}
     * @param revalidate    how often the provider is asked whether each signed-in user may still come in (by renewing
     *                      their refresh token): the most a user disabled at the provider keeps using API tokens; default 60 s
     * @param sessionTtl    how long a web UI session lasts without a new sign-in; default 12 h
     */
    public record Oidc(@Nullable URI issuer, @Nullable String clientId, @Nullable String clientSecret, @Nullable String audience,
            String rolesClaim, String adminRole, String memberRole, String viewerRole, Role defaultRole, List<String> scopes,
            Duration revalidate, Duration sessionTtl, @Nullable URI publicUrl) {

        public Oidc(@Nullable URI issuer, @Nullable String clientId, @Nullable String clientSecret,
                @Nullable String audience, @Nullable String rolesClaim, @Nullable String adminRole,
                @Nullable String memberRole, @Nullable String viewerRole, @Nullable Role defaultRole,
                @Nullable List<String> scopes, @Nullable Duration revalidate, @Nullable Duration sessionTtl,
                @Nullable URI publicUrl) {
            clientSecret = clientSecret == null || clientSecret.isBlank() ? null : clientSecret;
            audience = audience == null || audience.isBlank() ? clientId : audience;
            rolesClaim = rolesClaim == null || rolesClaim.isBlank() ? "realm_access.roles" : rolesClaim;
            adminRole = adminRole == null || adminRole.isBlank() ? "tether-admin" : adminRole;
            memberRole = memberRole == null || memberRole.isBlank() ? "tether-member" : memberRole;
            viewerRole = viewerRole == null || viewerRole.isBlank() ? "tether-viewer" : viewerRole;
            defaultRole = defaultRole == null ? Role.VIEWER : defaultRole;
            scopes = scopes == null || scopes.isEmpty() ? List.of("openid", "profile", "email", "offline_access") : List.copyOf(scopes);
            revalidate = PropertyChecks.positive("tether.identity.oidc.revalidate", revalidate, Duration.ofSeconds(60));
            sessionTtl = PropertyChecks.positive("tether.identity.oidc.session-ttl", sessionTtl, Duration.ofHours(12));
            if (issuer != null && !"https".equals(issuer.getScheme()) && !loopback(issuer)) {
                throw new IllegalArgumentException("tether.identity.oidc.issuer must be https (or http on a loopback host), was " + issuer);
            }
            this.issuer = issuer;
            this.clientId = clientId;
            this.clientSecret = clientSecret;
            this.audience = audience;
            this.rolesClaim = rolesClaim;
            this.adminRole = adminRole;
            this.memberRole = memberRole;
            this.viewerRole = viewerRole;
            this.defaultRole = defaultRole;
            this.scopes = scopes;
            this.revalidate = revalidate;
            this.sessionTtl = sessionTtl;
            this.publicUrl = publicUrl;
        }

        void requireComplete() {
            if (issuer == null || clientId == null || clientId.isBlank()) {
                throw new IllegalArgumentException("tether.identity.mode=oidc needs tether.identity.oidc.issuer and "
                        + "tether.identity.oidc.client-id (TETHER_IDENTITY_OIDC_ISSUER, TETHER_IDENTITY_OIDC_CLIENT_ID)");
            }
        }

        private static boolean loopback(URI uri) {
            String host = uri.getHost() == null ? "" : uri.getHost().toLowerCase(Locale.ROOT);
            return host.equals("localhost") || host.equals("[::1]") || host.startsWith("127.");
        }

        /** No secret in a log line. */
        @Override
        public String toString() {
            return "Oidc[issuer=" + issuer + ", clientId=" + clientId + ", clientSecret=" + (clientSecret == null ? "none" : "(set)")
                    + ", audience=" + audience + ", rolesClaim=" + rolesClaim + ", defaultRole=" + defaultRole + "]";
        }
    }
}
