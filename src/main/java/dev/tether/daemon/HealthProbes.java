package dev.tether.daemon;

import java.util.List;

import org.springframework.core.env.Environment;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.stereotype.Component;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * Which requests are health probes: {@code /api/health}, and Actuator's health and its groups (liveness, readiness),
 * on either port. A probe is no client's work: it is never counted nor shed under load, and a draining replica does
 * not take one for traffic that a load balancer still sends it.
 */
@Component
public final class HealthProbes {

    private final List<PathPattern> probes;

    public HealthProbes(Environment environment) {
        String actuator = environment.getProperty("management.endpoints.web.base-path", "/actuator");
        this.probes = List.of(PathPatternParser.defaultInstance.parse("/api/health"),
                PathPatternParser.defaultInstance.parse(actuator + "/health"),
                PathPatternParser.defaultInstance.parse(actuator + "/health/**"));
    }

    /** Whether {@code request} is a health probe. */
    public boolean matches(ServerHttpRequest request) {
        for (PathPattern probe : probes) {
            if (probe.matches(request.getPath().pathWithinApplication())) {
                return true;
            }
        }
        return false;
    }
}
