package dev.tether.detect;

/**
 * A plugin's guess of what a URL is, as Executor's {@code POST /api/integrations/detect} answers it.
 *
 * @param kind       the plugin that recognised it: {@code mcp}, {@code openapi}, {@code graphql}
 * @param confidence {@code high}, {@code medium} or {@code low}
 * @param endpoint   the URL, trimmed
 * @param name       a name to pre-fill, e.g. the host
 * @param slug       a slug to pre-fill
 */
public record Detection(String kind, String confidence, String endpoint, String name, String slug) {
}
