package dev.tether.users;

import java.util.List;

import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;
import org.springframework.core.env.Environment;
import org.springframework.http.server.PathContainer;

/**
 * Which requests need a principal: every route under {@code /api} but {@code /api/health}, {@code /api/docs}, the two
 * OAuth routes a browser or the desktop app reaches without credentials and the OAuth client metadata document an
 * authorization server fetches; the agent endpoints ({@code /mcp}, {@code /sse},
 * {@code /messages}); Actuator's endpoints but {@code /actuator/health} when they share the API's port; and, when the web
 * UI is private (a password, or signing in), its files too.
 *
 * <p>Decided on the path as routing matches it, segment by segment, decoded and without matrix variables: a check of the
 * raw text would let {@code /%61pi/integrations} or {@code /api;x=1/integrations} through to {@code /api/integrations}. A
 * segment that decodes to a slash is guarded outright.
 */
final class GuardedPaths {

    private static final List<String> HEALTH = List.of("api", "health");
    private static final List<String> DOCS = List.of("api", "docs");
    /**
     * Where the user's browser lands after authorizing at an OAuth server, and where the desktop app polls for the
     * outcome: neither can carry credentials. The unguessable {@code state} of a flow in flight is their gate.
     */
    private static final List<String> OAUTH_CALLBACK = List.of("api", "oauth", "callback");
    private static final List<String> OAUTH_AWAIT = List.of("api", "oauth", "await");
    /** Tether's OAuth client metadata document: authorization servers fetch it, and it holds nothing secret. */
    private static final List<String> OAUTH_CLIENT_METADATA = List.of("api", "oauth", "client-metadata.json");
    private static final List<String> GUARDED_ROOTS = List.of("api", "mcp", "sse", "messages");

    /** Actuator's base path as segments, when Actuator shares the API's port; empty when it has a port of its own. */
    private final List<String> actuator;
    private final boolean privateWebUi;
    private final List<List<String>> open;

    /**
     * @param privateWebUi whether the web UI's files need a principal too
     * @param open         more paths that need none (where signing in begins and ends)
     */
    GuardedPaths(Environment environment, boolean privateWebUi, List<List<String>> open) {
        this.actuator = ManagementPortType.get(environment) == ManagementPortType.SAME
                ? segments(PathContainer.parsePath(environment.getProperty("management.endpoints.web.base-path", "/actuator")))
                : List.of();
        this.privateWebUi = privateWebUi;
        this.open = List.copyOf(open);
    }

    boolean guarded(PathContainer path) {
        List<String> segments = segments(path);
        if (segments.stream().anyMatch(segment -> segment.contains("/"))) {
            return true;
        }
        boolean openRoute = segments.equals(HEALTH) || startsWith(segments, DOCS) || segments.equals(OAUTH_CALLBACK)
                || segments.equals(OAUTH_CLIENT_METADATA) || segments.size() == OAUTH_AWAIT.size() + 1 && startsWith(segments, OAUTH_AWAIT) || open.contains(segments);
        if (openRoute) {
            return false;
        }
        boolean apiOrAgents = !segments.isEmpty() && GUARDED_ROOTS.contains(segments.get(0));
        boolean webUi = privateWebUi && (segments.isEmpty() || !segments.get(0).equals(actuatorRoot()));
        return apiOrAgents || webUi || actuatorButHealth(segments);
    }

    /** Whether the path is the API's or an agent endpoint's, where a refusal is JSON, not a page. */
    static boolean api(PathContainer path) {
        List<String> segments = segments(path);
        return !segments.isEmpty() && GUARDED_ROOTS.contains(segments.get(0));
    }

    /** Whether the path is one of the agent endpoints ({@code /mcp}, {@code /mcp/tools}, {@code /sse}, {@code /messages}). */
    static boolean agents(PathContainer path) {
        List<String> segments = segments(path);
        return !segments.isEmpty() && !segments.get(0).equals("api") && GUARDED_ROOTS.contains(segments.get(0));
    }

    private String actuatorRoot() {
        return actuator.isEmpty() ? "actuator" : actuator.get(0);
    }

    /** {@code /actuator} and everything below it but {@code /actuator/health} and its groups (liveness, readiness). */
    private boolean actuatorButHealth(List<String> segments) {
        if (actuator.isEmpty() || !startsWith(segments, actuator)) {
            return false;
        }
        return !(segments.size() > actuator.size() && segments.get(actuator.size()).equals("health"));
    }

    private static boolean startsWith(List<String> segments, List<String> prefix) {
        return segments.size() >= prefix.size() && segments.subList(0, prefix.size()).equals(prefix);
    }

    static List<String> segments(PathContainer path) {
        return path.elements().stream()
                .filter(PathContainer.PathSegment.class::isInstance)
                .map(segment -> ((PathContainer.PathSegment) segment).valueToMatch())
                .filter(segment -> !segment.isEmpty())
                .toList();
    }
}
