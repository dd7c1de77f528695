package dev.tether.users;

import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseCookie;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.jwt.JwtException;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

import dev.tether.identity.Audit;
import dev.tether.identity.AuditEvent;
import dev.tether.identity.NotPermittedException;
import dev.tether.identity.Principal;
import dev.tether.identity.Principals;
import dev.tether.identity.Via;
import dev.tether.store.Columns;
import dev.tether.store.SignedInUsers;

/**
 * Signing in to the web UI through the OIDC provider ({@code oidc} mode): authorization code with PKCE (S256), a 256-bit
 * {@code state} and {@code nonce}, the sign-in in flight kept in the database for ten minutes and redeemable once, so the
 * browser may come back to any replica. The ID token is checked (signature, issuer, audience, expiry, nonce); the user's
 * role comes from the access token's claims; the refresh token is kept sealed for the revalidation. A session cookie
 * ({@link WebSessions}) is the outcome.
 */
@RestController
final class SignInController {

    private static final Logger log = LoggerFactory.getLogger(SignInController.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Duration IN_FLIGHT = Duration.ofMinutes(10);
    static final String LOGIN = "/api/auth/login";
    static final String CALLBACK = "/api/auth/callback";

    private final IdentityProperties properties;
    private final OidcProvider provider;
    private final OidcPrincipals principals;
    private final SignedInUsers users;
    private final WebSessions sessions;
    private final DatabaseClient db;
    private final Audit audit;
    private final Clock clock = Clock.systemUTC();

    SignInController(IdentityProperties properties, OidcProvider provider, OidcPrincipals principals, SignedInUsers users,
            WebSessions sessions, DatabaseClient db, Audit audit) {
        this.properties = properties;
        this.provider = provider;
        this.principals = principals;
        this.users = users;
        this.sessions = sessions;
        this.db = db;
        this.audit = audit;
    }

    /** Sends the browser to the provider; {@code return} is where it lands afterwards (a path of this origin). */
    @GetMapping(LOGIN)
    Mono<ResponseEntity<Object>> login(@RequestParam(name = "return", required = false) @Nullable String returnTo,
            ServerWebExchange exchange) {
        if (properties.mode() != IdentityProperties.Mode.OIDC) {
            return Mono.just(notOidc());
        }
        String state = random();
        String nonce = random();
        String verifier = random();
        String redirectUri = origin(exchange.getRequest()) + CALLBACK;
        String landing = safeReturn(returnTo);
        return provider.metadata().flatMap(published -> db.sql("INSERT INTO sign_in (state, nonce, verifier, return_to, redirect_uri, "
                                + "created_at) VALUES (:state, :nonce, :verifier, :returnTo, :redirectUri, :now)")
                        .bind("state", state).bind("nonce", nonce).bind("verifier", verifier).bind("returnTo", landing)
                        .bind("redirectUri", redirectUri).bind("now", clock.millis())
                        .fetch().rowsUpdated()
                        .then(db.sql("DELETE FROM sign_in WHERE created_at < :before").bind("before", clock.millis() - IN_FLIGHT.toMillis())
                                .fetch().rowsUpdated())
                        .thenReturn(URI.create(published.authorization() + (published.authorization().getRawQuery() == null ? "?" : "&")
                                + "response_type=code&client_id=" + encode(Objects.requireNonNull(properties.oidc().clientId()))
                                + "&redirect_uri=" + encode(redirectUri)
                                + "&scope=" + encode(String.join(" ", properties.oidc().scopes()))
                                + "&state=" + state + "&nonce=" + nonce
                                + "&code_challenge=" + challenge(verifier) + "&code_challenge_method=S256")))
                .map(location -> ResponseEntity.status(HttpStatus.FOUND).location(location).header(HttpHeaders.CACHE_CONTROL, "no-store")
                        .build());
    }

    /** Where the provider sends the browser back: the code becomes a session, and the browser goes where it was going. */
    @GetMapping(CALLBACK)
    Mono<ResponseEntity<Object>> callback(@RequestParam(required = false) @Nullable String state,
            @RequestParam(required = false) @Nullable String code, @RequestParam(required = false) @Nullable String error,
            ServerWebExchange exchange) {
        if (properties.mode() != IdentityProperties.Mode.OIDC) {
            return Mono.just(notOidc());
        }
        if (state == null || state.length() > 64) {
            return Mono.just(failed(HttpStatus.BAD_REQUEST, "the provider sent no state"));
        }
        return take(state).flatMap(flight -> {
            if (error != null || code == null) {
                return Mono.just(failed(HttpStatus.BAD_REQUEST, "the provider answered " + (error == null ? "no code" : error)));
            }
            return provider.exchange(code, flight.redirectUri(), flight.verifier())
                    .flatMap(tokens -> signedIn(tokens, flight))
                    .flatMap(principal -> sessions.open(principal).map(session -> {
                        audit.record(AuditEvent.of(principal, "sign-in", "web UI", "ok"));
                        return ResponseEntity.status(HttpStatus.FOUND).location(URI.create(flight.returnTo()))
                                .header(HttpHeaders.SET_COOKIE, cookie(exchange.getRequest(), session, properties.oidc().sessionTtl()).toString())
                                .header(HttpHeaders.CACHE_CONTROL, "no-store")
                                .build();
                    }))
                    .onErrorResume(OidcProvider.RefusedException.class, refused -> Mono.just(
                            failed(HttpStatus.BAD_REQUEST, Objects.requireNonNull(refused.getMessage()))))
                    .onErrorResume(JwtException.class, refused -> Mono.just(failed(HttpStatus.BAD_REQUEST,
                            "the provider's ID token did not pass: " + refused.getMessage())))
                    .onErrorResume(OidcProvider.UnavailableException.class, down -> Mono.just(
                            failed(HttpStatus.BAD_GATEWAY, Objects.requireNonNull(down.getMessage()))));
        }).switchIfEmpty(Mono.fromSupplier(() -> failed(HttpStatus.NOT_FOUND,
                "no sign-in is in flight with this state: it was used, it is older than ten minutes, or it was never started here")));
    }

    /** Ends the caller's web session. */
    @PostMapping("/api/auth/logout")
    Mono<ResponseEntity<Map<String, Object>>> logout(ServerWebExchange exchange) {
        Optional<String> session = Optional.ofNullable(exchange.getRequest().getCookies().getFirst(WebSessions.COOKIE))
                .map(cookie -> cookie.getValue());
        return Principals.current().flatMap(caller -> session.map(sessions::close).orElse(Mono.empty())
                .then(Mono.fromSupplier(() -> {
                    audit.record(AuditEvent.of(caller, "sign-out", "web UI", session.isPresent() ? "ok" : "absent"));
                    Map<String, Object> answer = new LinkedHashMap<>();
                    answer.put("signedOut", session.isPresent());
                    return ResponseEntity.ok().header(HttpHeaders.SET_COOKIE, cookie(exchange.getRequest(), "", Duration.ZERO).toString())
                            .body(answer);
                })));
    }

    /** Who the caller is, as Tether sees it. */
    @GetMapping("/api/auth/me")
    Mono<Map<String, Object>> me() {
        return Principals.current().map(caller -> {
            Map<String, Object> me = new LinkedHashMap<>();
            me.put("tenant", caller.tenant());
            me.put("subject", caller.subject());
            me.put("name", caller.name());
            me.put("role", caller.role().wire());
            me.put("via", caller.via().wire());
            me.put("mode", properties.mode().name().toLowerCase(java.util.Locale.ROOT));
            return me;
        });
    }

    private record Flight(String nonce, String verifier, String returnTo, String redirectUri) {
    }

    /** The sign-in of this state, removed: redeemable once, whichever replica the browser comes back to. */
    private Mono<Flight> take(String state) {
        return db.sql("SELECT nonce, verifier, return_to, redirect_uri, created_at FROM sign_in WHERE state = :state").bind("state", state)
                .map(row -> new Object[] { new Flight(Columns.text(row, "nonce"), Columns.text(row, "verifier"),
                        Columns.text(row, "return_to"), Columns.text(row, "redirect_uri")), row.get("created_at", Long.class) })
                .one()
                .flatMap(row -> db.sql("DELETE FROM sign_in WHERE state = :state").bind("state", state).fetch().rowsUpdated()
                        // Another request took it between the read and the delete: it is that one's.
                        .filter(rows -> rows == 1 && clock.millis() - (Long) row[1] < IN_FLIGHT.toMillis())
                        .map(taken -> (Flight) row[0]));
    }

    /** Checks the ID token (and its nonce), records the user, and answers its principal. */
    private Mono<Principal> signedIn(OidcProvider.Tokens tokens, Flight flight) {
        String idToken = tokens.idToken().orElseThrow(() -> new OidcProvider.RefusedException("no_id_token",
                "the provider answered no ID token: is openid among tether.identity.oidc.scopes?"));
        return provider.idToken(idToken).flatMap(id -> {
            if (!flight.nonce().equals(id.getClaimAsString("nonce"))) {
                return Mono.error(new OidcProvider.RefusedException("invalid_nonce", "the ID token is not this sign-in's"));
            }
            // The role is the access token's (Keycloak lists realm roles there); its audience is checked as an agent's.
            return provider.accessToken(tokens.accessToken()).map(Jwt::getClaims).onErrorResume(JwtException.class, notOurs -> {
                        log.warn("the access token of {}'s sign-in does not pass as Tether's ({}): the ID token's claims give the role",
                                id.getSubject(), notOurs.getMessage());
                        return Mono.just(id.getClaims());
                    })
                    .map(claims -> principals.principal(merge(id.getClaims(), claims), Via.SESSION, null))
                    .flatMap(principal -> users.signedIn(principal.subject(), Optional.ofNullable(principal.name()),
                                    Optional.ofNullable(id.getClaimAsString("email")), principal.role(), tokens.refreshToken())
                            .then(Mono.fromRunnable(() -> principals.forget(principal.subject())))
                            .thenReturn(principal));
        });
    }

    private static Map<String, Object> merge(Map<String, Object> id, Map<String, Object> access) {
        Map<String, Object> claims = new LinkedHashMap<>(id);
        access.forEach(claims::putIfAbsent);
        if (access.containsKey("realm_access")) {
            claims.put("realm_access", access.get("realm_access"));
        }
        if (access.containsKey("resource_access")) {
            claims.put("resource_access", access.get("resource_access"));
        }
        return claims;
    }

    /** The origin the browser used, or {@code tether.identity.oidc.public-url} behind a proxy. */
    private String origin(ServerHttpRequest request) {
        return ProtectedResourceController.origin(request, properties);
    }

    /** A path of this origin only: anything else (another host, {@code //evil}) lands on the web UI's root. */
    private static String safeReturn(@Nullable String returnTo) {
        if (returnTo == null || !returnTo.startsWith("/") || returnTo.startsWith("//") || returnTo.startsWith("/\\")
                || returnTo.length() > 2000 || returnTo.chars().anyMatch(c -> c < 0x20)) {
            return "/";
        }
        return returnTo;
    }

    private ResponseCookie cookie(ServerHttpRequest request, String value, Duration maxAge) {
        boolean secure = "https".equals(request.getURI().getScheme())
                || properties.oidc().publicUrl() != null && "https".equals(properties.oidc().publicUrl().getScheme());
        return ResponseCookie.from(WebSessions.COOKIE, value).httpOnly(true).secure(secure).sameSite("Lax").path("/").maxAge(maxAge).build();
    }

    private static ResponseEntity<Object> failed(HttpStatus status, String message) {
        return ResponseEntity.status(status).header(HttpHeaders.CACHE_CONTROL, "no-store")
                .body(Map.of("_tag", "SignInError", "message", message));
    }

    private static ResponseEntity<Object> notOidc() {
        return ResponseEntity.status(HttpStatus.NOT_FOUND).body(Map.of("_tag", "SignInError",
                "message", "signing in is for tether.identity.mode=oidc; this daemon takes its token"));
    }

    private static String random() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    private static String challenge(String verifier) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(verifier.getBytes(StandardCharsets.US_ASCII));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
        }
        catch (NoSuchAlgorithmException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }
}
