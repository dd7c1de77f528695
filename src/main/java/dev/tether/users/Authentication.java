package dev.tether.users;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.daemon.StartupFailure;
import dev.tether.identity.Audit;
import dev.tether.identity.AuditEvent;
import dev.tether.identity.Principal;
import dev.tether.identity.Principals;
import dev.tether.identity.Role;
import dev.tether.identity.Via;
import dev.tether.security.ApiProperties;
import dev.tether.security.AuthToken;
import dev.tether.security.AuthenticatedPeer;
import dev.tether.security.HostOriginFilter;

/**
 * Gives every request that needs one ({@link GuardedPaths}) its {@link Principal}, or refuses it with 401: the principal
 * goes into the request's Reactor context ({@link Principals}), where the store and everything else below find it, and
 * into its attributes, for the web filters after this one. The credentials, the first that proves someone winning:
 * <ul>
 * <li>The daemon's token ({@code Authorization: Bearer <token>}, or the bare token in {@code x-executor-token}, as Executor
 *     takes it): the single user {@value Principal#LOCAL_SUBJECT}, an admin.
 * <li>HTTP Basic with the desktop app's password ({@code tether.api.password}, any user name, as Executor checks only the
 *     password): the same single user.
 * <li>A personal API token ({@code tth_…}, either header): its owner, at the token's role.
 * <li>In {@code oidc} mode, a JWT of the provider (audience-checked, {@link OidcPrincipals}) and the web UI's session
 *     cookie ({@link WebSessions}); a user the provider no longer lets in ({@link UserRevalidation}) gets in with nothing,
 *     and a token or session acts at most at the role the provider last gave its user. Refused, an agent endpoint names
 *     its RFC 9728 metadata in the challenge ({@code resource_metadata}), and a browser asking for a page of the web UI
 *     is sent to sign in.
 * </ul>
 * A request a peer replica proved it sent ({@link AuthenticatedPeer}, checked before this filter) carries no client's
 * credential: the peer checked it, and names the principal it passes the request on for in {@value Principals#HEADER},
 * which its credential covers; without one it is the peer's own work, the single user's.
 * With {@code tether.api.require-auth=false} (the app's "require auth" off) nothing is asked and every request is the
 * single user's, which is allowed on loopback only, as Executor allows it. A refusal carries Executor's challenge, naming
 * both schemes. A viewer's request that would change something ({@code /api}, any method but GET and HEAD) is a 403.
 * Every request given a principal, and every refusal, is an audit event ({@code request}) with its method, path and status.
 */
@Component
@Order(HostOriginFilter.ORDER + 1)
public final class Authentication implements WebFilter {

    /** The auth schemes; RFC 7235 makes their names case-insensitive, so {@code bearer} and {@code BEARER} count too. */
    private static final String SCHEME = "Bearer ";
    private static final String BASIC = "Basic ";
    /** Executor's other place for the token: the header's whole value, compared as it is (no scheme, no trimming). */
    static final String TOKEN_HEADER = "x-executor-token";
    /** Executor's challenge, byte for byte ({@code apps/local/src/serve.ts}). */
    static final String CHALLENGE = "Bearer realm=\"executor\", Basic realm=\"executor\"";
    private static final byte[] UNAUTHORIZED = "{\"_tag\":\"UnauthorizedError\",\"message\":\"missing or invalid bearer token\"}"
            .getBytes(StandardCharsets.UTF_8);
    private static final Set<HttpMethod> READS = Set.of(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS);
    /** Where signing in begins and ends, and the agent endpoints' RFC 9728 metadata: for callers who have no credential yet. */
    private static final List<List<String>> SIGN_IN = List.of(List.of("api", "auth", "login"), List.of("api", "auth", "callback"),
            List.of(".well-known", "oauth-protected-resource"), List.of(".well-known", "oauth-protected-resource", "mcp"),
            List.of(".well-known", "oauth-protected-resource", "mcp", "tools"), List.of(".well-known", "oauth-protected-resource", "sse"));
    private static final String UNAVAILABLE =
            "{\"_tag\":\"IdentityProviderUnavailableError\",\"message\":\"the identity provider cannot be reached to check this token\"}";

    private final AuthToken token;
    private final byte @Nullable [] password;
    private final boolean requireAuth;
    private final GuardedPaths paths;
    private final ApiTokens apiTokens;
    private final Audit audit;
    private final IdentityProperties identity;
    private final boolean oidc;
    private final OidcPrincipals oidcPrincipals;
    private final WebSessions sessions;
    private final JsonMapper json;
    private final Principal local;

    Authentication(AuthToken token, ApiProperties api, IdentityProperties identity, ApiTokens apiTokens, OidcPrincipals oidcPrincipals,
            WebSessions sessions, Audit audit, Environment environment, JsonMapper json) {
        this.token = token;
        this.oidc = identity.mode() == IdentityProperties.Mode.OIDC;
        this.oidcPrincipals = oidcPrincipals;
        this.sessions = sessions;
        this.password = api.password() == null ? null : api.password().getBytes(StandardCharsets.UTF_8);
        this.requireAuth = api.requireAuth();
        this.identity = identity;
        this.apiTokens = apiTokens;
        this.audit = audit;
        this.json = json;
        this.local = Principal.local(identity.tenant(), requireAuth ? Via.DAEMON_TOKEN : Via.OPEN);
        // With a password, or signing in, the web UI is private too, as Executor keeps it; without, it is Executor's public build.
        this.paths = new GuardedPaths(environment, password != null || oidc, oidc ? SIGN_IN : List.of());
        if (!requireAuth) {
            String address = environment.getProperty("server.address", "127.0.0.1");
            if (!loopback(address)) {
                throw new StartupFailure("tether.api.require-auth=false serves the API to anyone who reaches it: it is"
                        + " allowed on loopback only, and server.address is " + address
                        + " (set a password, EXECUTOR_AUTH_PASSWORD for bin/executor-sidecar, or listen on 127.0.0.1)");
            }
        }
    }

    private static boolean loopback(String address) {
        String host = address.strip();
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return host.equalsIgnoreCase("localhost") || host.equals("::1") || host.matches("127(\\.\\d{1,3}){3}");
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpRequest request = exchange.getRequest();
        if (!paths.guarded(request.getPath().pathWithinApplication())) {
            return chain.filter(exchange);
        }
        if (AuthenticatedPeer.of(exchange).isPresent()) {
            return admit(exchange, chain, Principals.fromHeader(request.getHeaders().getFirst(Principals.HEADER)).orElse(local));
        }
        if (!requireAuth) {
            return admit(exchange, chain, local);
        }
        return principal(request)
                .flatMap(found -> found.map(principal -> admit(exchange, chain, principal)).orElseGet(() -> refuse(exchange)))
                .onErrorResume(OidcProvider.UnavailableException.class, down -> unavailable(exchange, down));
    }

    /** The principal the request's credentials prove; empty when none does. */
    private Mono<Optional<Principal>> principal(ServerHttpRequest request) {
        HttpHeaders headers = request.getHeaders();
        String authorization = headers.getFirst(HttpHeaders.AUTHORIZATION);
        String bearer = authorization != null && authorization.regionMatches(true, 0, SCHEME, 0, SCHEME.length())
                ? authorization.substring(SCHEME.length()).strip() : null;
        String tokenHeader = headers.getFirst(TOKEN_HEADER);
        // The daemon's token first: the desktop app's and the CLI's every request, answered without a lookup.
        if (token.matches(bearer) || tokenHeader != null && !tokenHeader.isEmpty() && token.matches(tokenHeader)) {
            return Mono.just(Optional.of(local));
        }
        if (password != null && authorization != null && authorization.regionMatches(true, 0, BASIC, 0, BASIC.length())
                && basicPasswordMatches(authorization.substring(BASIC.length()).strip())) {
            return Mono.just(Optional.of(local));
        }
        // Either credential passing is enough: a wrong Authorization beside a right header still gets in, as in Executor.
        Mono<Optional<Principal>> fromBearer = bearer == null ? Mono.just(Optional.empty()) : bearer(bearer);
        return fromBearer.flatMap(found -> found.isPresent() || tokenHeader == null || tokenHeader.equals(bearer)
                        ? Mono.just(found) : bearer(tokenHeader))
                .flatMap(found -> found.isPresent() || !oidc ? Mono.just(found) : fromSession(request));
    }

    /** A personal API token, or in {@code oidc} mode a provider's JWT; as its user stands now in {@code oidc} mode. */
    private Mono<Optional<Principal>> bearer(String presented) {
        if (ApiTokens.looksLike(presented)) {
            Mono<Optional<Principal>> token = apiTokens.verify(presented);
            return oidc ? token.flatMap(found -> found.map(oidcPrincipals::standing).orElse(Mono.just(Optional.empty()))) : token;
        }
        return oidc && OidcPrincipals.looksLikeJwt(presented) ? oidcPrincipals.fromJwt(presented) : Mono.just(Optional.empty());
    }

    /** The web UI's session cookie, as its user stands now. */
    private Mono<Optional<Principal>> fromSession(ServerHttpRequest request) {
        var cookie = request.getCookies().getFirst(WebSessions.COOKIE);
        if (cookie == null || cookie.getValue().isEmpty() || cookie.getValue().length() > 100) {
            return Mono.just(Optional.empty());
        }
        return sessions.principal(cookie.getValue())
                .flatMap(found -> found.map(oidcPrincipals::standing).orElse(Mono.just(Optional.empty())));
    }

    /** {@code user:password} in base64; the user name is not checked (Executor's {@code hasBasicPassword}). */
    private boolean basicPasswordMatches(String encoded) {
        byte[] decoded;
        try {
            decoded = Base64.getDecoder().decode(encoded);
        }
        catch (IllegalArgumentException notBase64) {
            return false;
        }
        int colon = 0;
        while (colon < decoded.length && decoded[colon] != ':') {
            colon++;
        }
        byte[] given = colon < decoded.length ? Arrays.copyOfRange(decoded, colon + 1, decoded.length) : decoded;
        return MessageDigest.isEqual(password, given); // constant time, as for the token
    }

    private Mono<Void> admit(ServerWebExchange exchange, WebFilterChain chain, Principal principal) {
        ServerHttpRequest request = exchange.getRequest();
        ServerHttpResponse response = exchange.getResponse();
        AtomicBoolean recorded = new AtomicBoolean();
        // When the status is known, not when the answer ends: an event stream may stay open for hours.
        response.beforeCommit(() -> Mono.fromRunnable(() -> {
            if (recorded.compareAndSet(false, true)) {
                record(principal, request, response.getStatusCode(), null);
            }
        }));
        if (principal.role() == Role.VIEWER && !READS.contains(request.getMethod())
                && GuardedPaths.api(request.getPath().pathWithinApplication()) && !GuardedPaths.agents(request.getPath().pathWithinApplication())) {
            return forbidden(response, "a viewer may not " + request.getMethod().name() + " " + request.getPath().value()
                    + ": viewers read only");
        }
        exchange.getAttributes().put(Principals.ATTRIBUTE, principal);
        return chain.filter(exchange)
                .contextWrite(Principals.as(principal))
                .doFinally(signal -> {
                    if (recorded.compareAndSet(false, true)) {
                        record(principal, request, response.getStatusCode(), signal.name().toLowerCase(java.util.Locale.ROOT));
                    }
                });
    }

    private void record(@Nullable Principal principal, ServerHttpRequest request, @Nullable HttpStatusCode status,
            @Nullable String ended) {
        int code = status == null ? 200 : status.value();
        String outcome = ended != null && !ended.equals("on_complete") ? "cancelled" : outcome(code);
        audit.record(new AuditEvent(Instant.now(), principal, "request", request.getMethod().name() + " " + request.getPath().value(),
                outcome, status == null && ended != null ? null : code, null));
    }

    private static String outcome(int status) {
        if (status < 400) {
            return "ok";
        }
        if (status == 401 || status == 403) {
            return "refused";
        }
        if (status == 404) {
            return "not_found";
        }
        return status < 500 ? "rejected" : "failed";
    }

    private Mono<Void> refuse(ServerWebExchange exchange) {
        ServerHttpResponse response = exchange.getResponse();
        ServerHttpRequest request = exchange.getRequest();
        record(null, request, HttpStatus.UNAUTHORIZED, null);
        if (oidc && page(request)) {
            // A browser opening the web UI: to the provider, and back here.
            String path = request.getURI().getRawPath() + (request.getURI().getRawQuery() == null ? "" : "?" + request.getURI().getRawQuery());
            response.setStatusCode(HttpStatus.FOUND);
            response.getHeaders().setLocation(java.net.URI.create(SignInController.LOGIN + "?return="
                    + java.net.URLEncoder.encode(path, StandardCharsets.UTF_8)));
            return response.setComplete();
        }
        response.setStatusCode(HttpStatus.UNAUTHORIZED);
        String challenge = oidc && GuardedPaths.agents(request.getPath().pathWithinApplication())
                ? CHALLENGE + ", Bearer resource_metadata=\"" + ProtectedResourceController.metadataUrl(request, identity,
                        agentRoot(request)) + "\""
                : CHALLENGE;
        response.getHeaders().set(HttpHeaders.WWW_AUTHENTICATE, challenge);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(UNAUTHORIZED)));
    }

    /** A browser asking for a page of the web UI (not the API, not an agent): it gets sent to sign in, not a 401. */
    private static boolean page(ServerHttpRequest request) {
        return HttpMethod.GET.equals(request.getMethod()) && !GuardedPaths.api(request.getPath().pathWithinApplication())
                && request.getHeaders().getAccept().stream().anyMatch(type -> type.isCompatibleWith(MediaType.TEXT_HTML)
                        && !type.isWildcardType());
    }

    /** {@code /mcp}, {@code /mcp/tools} or {@code /sse}: the resource whose metadata a refused agent is pointed at. */
    private static String agentRoot(ServerHttpRequest request) {
        List<String> segments = GuardedPaths.segments(request.getPath().pathWithinApplication());
        if (segments.size() >= 2 && segments.get(0).equals("mcp") && segments.get(1).equals("tools")) {
            return "/mcp/tools";
        }
        return segments.get(0).equals("mcp") ? "/mcp" : "/sse";
    }

    /** The provider could not be asked to check a JWT: nobody knows whether it is good, so neither 200 nor 401. */
    private Mono<Void> unavailable(ServerWebExchange exchange, OidcProvider.UnavailableException down) {
        org.slf4j.LoggerFactory.getLogger(Authentication.class).warn("a JWT could not be checked: {}", down.getMessage());
        ServerHttpResponse response = exchange.getResponse();
        record(null, exchange.getRequest(), HttpStatus.SERVICE_UNAVAILABLE, null);
        response.setStatusCode(HttpStatus.SERVICE_UNAVAILABLE);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(UNAVAILABLE.getBytes(StandardCharsets.UTF_8))));
    }

    private Mono<Void> forbidden(ServerHttpResponse response, String message) {
        response.setStatusCode(HttpStatus.FORBIDDEN);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        byte[] body = json.writeValueAsBytes(java.util.Map.of("_tag", "ForbiddenError", "message", message));
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }
}
