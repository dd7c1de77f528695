package dev.tether.detect;

import reactor.core.publisher.Mono;

/**
 * One plugin's recogniser for {@code POST /api/integrations/detect}: a Spring bean in the plugin's own package. Beans
 * are asked in their {@link org.springframework.core.annotation.Order} (Executor asks its plugins in the order it
 * loads them: OpenAPI {@value #OPENAPI}, MCP {@value #MCP}, GraphQL {@value #GRAPHQL}), each one after the other.
 */
public interface IntegrationDetector {

    int OPENAPI = 10;
    int MCP = 20;
    int GRAPHQL = 30;

    /**
     * What this plugin makes of {@code url} (already trimmed, never empty); empty when it does not recognise it. A
     * detector answers empty rather than fail: Executor turns a plugin's failure into "not recognised".
     */
    Mono<Detection> detect(String url);
}
