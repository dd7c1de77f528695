package dev.tether.store;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

/**
 * A server reached over HTTP.
 *
 * @param endpoint        its URL
 * @param remoteTransport streamable HTTP, SSE, or auto (streamable HTTP, then SSE)
 * @param queryParams     added to every request
 * @param headers         added to every request; values may be secrets and the API masks them
 * @param authenticationTemplate Executor's declared auth methods, as its JSON (see {@code httpauth.AuthMethods}):
 *                        how a connection's values apply to requests; empty for a server stored before Tether kept them
 * @param omitted         which of the optional maps ({@code queryParams}, {@code headers}) the client left out: Executor
 *                        stores the config as given and its answers leave them out, so Tether's do too; they read as empty
 */
public record RemoteConfig(String endpoint, RemoteTransport remoteTransport, Map<String, String> queryParams,
        Map<String, String> headers, List<Map<String, Object>> authenticationTemplate, Set<String> omitted) implements ServerConfig {

    /** The maps a client may leave out, in Executor's order. */
    public static final List<String> OPTIONAL = List.of("queryParams", "headers");

    /** Executor's remote transports. */
    public enum RemoteTransport {
        STREAMABLE_HTTP("streamable-http"), SSE("sse"), AUTO("auto");

        private final String wire;

        RemoteTransport(String wire) {
            this.wire = wire;
        }

        public String wire() {
            return wire;
        }

        public static Optional<RemoteTransport> parse(@Nullable String text) {
            return Arrays.stream(values()).filter(t -> t.wire.equals(text)).findFirst();
        }
    }

    public RemoteConfig(@Nullable String endpoint, @Nullable RemoteTransport remoteTransport,
            @Nullable Map<String, String> queryParams, @Nullable Map<String, String> headers,
            @Nullable List<Map<String, Object>> authenticationTemplate, Set<String> omitted) {
        Objects.requireNonNull(endpoint, "endpoint");
        remoteTransport = remoteTransport == null ? RemoteTransport.AUTO : remoteTransport;
        Set<String> left = new TreeSet<>(omitted);
        if (queryParams == null) {
            left.add("queryParams");
        }
        if (headers == null) {
            left.add("headers");
        }
        left.retainAll(OPTIONAL);
        queryParams = queryParams == null ? Map.of() : Map.copyOf(queryParams);
        headers = headers == null ? Map.of() : Map.copyOf(headers);
        authenticationTemplate = authenticationTemplate == null ? List.of() : List.copyOf(authenticationTemplate);
        omitted = Set.copyOf(left);
        this.endpoint = endpoint;
        this.remoteTransport = remoteTransport;
        this.queryParams = queryParams;
        this.headers = headers;
        this.authenticationTemplate = authenticationTemplate;
        this.omitted = omitted;
    }

    /** A config whose {@code null} maps were left out. */
    public RemoteConfig(@Nullable String endpoint, @Nullable RemoteTransport remoteTransport, @Nullable Map<String, String> queryParams,
            @Nullable Map<String, String> headers, @Nullable List<Map<String, Object>> authenticationTemplate) {
        this(endpoint, remoteTransport, queryParams, headers, authenticationTemplate, Set.of());
    }

    /** A server that declares no auth methods. */
    public RemoteConfig(String endpoint, @Nullable RemoteTransport remoteTransport, @Nullable Map<String, String> queryParams,
            @Nullable Map<String, String> headers) {
        this(endpoint, remoteTransport, queryParams, headers, List.of());
    }

    public RemoteConfig withAuthenticationTemplate(List<Map<String, Object>> methods) {
        return new RemoteConfig(endpoint, remoteTransport, queryParams, headers, methods, omitted);
    }

    /** Whether the client gave this optional map, so that an answer carries it. */
    public boolean given(String field) {
        return !omitted.contains(field);
    }

    @Override
    public String transport() {
        return "remote";
    }

    /** Names only, for headers and query values alike: a config in a log line shows no secret. */
    @Override
    public String toString() {
        return "RemoteConfig[endpoint=" + endpoint + ", remoteTransport=" + remoteTransport.wire() + ", queryParams="
                + queryParams.keySet() + "=***, headers=" + headers.keySet() + "=***]";
    }
}
