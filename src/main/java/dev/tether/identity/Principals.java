package dev.tether.identity;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * The principal a pipeline acts for, carried in its Reactor context: the authentication filter writes it around every
 * request, an execution around its drives, and whatever reads or writes a row looks it up here. A pipeline with none
 * is the daemon's own work ({@link Principal#DAEMON}).
 */
public final class Principals {

    private static final Class<Principal> KEY = Principal.class;

    /**
     * The name under which the authentication filter also leaves the principal among a request's attributes, for the
     * web filters after it that decide before any pipeline runs (where a request is forwarded).
     */
    public static final String ATTRIBUTE = Principal.class.getName();

    /** The header in which one replica names the principal it passes a request on for ({@link #header}). */
    public static final String HEADER = "X-Tether-Principal";

    private Principals() {
    }

    /** The principal of the subscribing pipeline; {@link Principal#DAEMON} when it has none. */
    public static Mono<Principal> current() {
        return Mono.deferContextual(context -> Mono.just(of(context)));
    }

    public static Principal of(ContextView context) {
        return Objects.requireNonNull(context.getOrDefault(KEY, Principal.DAEMON));
    }

    /** For {@code contextWrite}: runs what is upstream as {@code principal}. */
    public static Function<Context, Context> as(Principal principal) {
        return context -> context.put(KEY, principal);
    }

    /**
     * The principal as one header value, for a request one replica passes to another on its caller's behalf: its parts
     * URL-encoded, joined by {@code ;}. Only a peer's request is believed when it carries one.
     */
    public static String header(Principal principal) {
        return Stream.of(principal.tenant(), principal.subject(), principal.role().wire(), principal.via().name(),
                        Objects.requireNonNullElse(principal.credential(), ""), Objects.requireNonNullElse(principal.name(), ""))
                .map(part -> URLEncoder.encode(part, StandardCharsets.UTF_8))
                .collect(Collectors.joining(";"));
    }

    /** The principal a {@link #header} names; empty for anything else. */
    public static Optional<Principal> fromHeader(@Nullable String header) {
        if (header == null) {
            return Optional.empty();
        }
        String[] parts = header.split(";", -1);
        if (parts.length != 6) {
            return Optional.empty();
        }
        try {
            String[] decoded = Arrays.stream(parts).map(part -> URLDecoder.decode(part, StandardCharsets.UTF_8)).toArray(String[]::new);
            Optional<Role> role = Role.parse(decoded[2]);
            if (role.isEmpty()) {
                return Optional.empty();
            }
            return Optional.of(new Principal(decoded[0], decoded[1], role.get(), Via.valueOf(decoded[3]),
                    decoded[4].isEmpty() ? null : decoded[4], decoded[5].isEmpty() ? null : decoded[5]));
        }
        catch (IllegalArgumentException malformed) {
            return Optional.empty();
        }
    }

    /** For {@code contextWrite}: runs what is upstream as the daemon, which sees every user's rows (bookkeeping only). */
    public static Function<Context, Context> asDaemon() {
        return as(Principal.DAEMON);
    }
}
