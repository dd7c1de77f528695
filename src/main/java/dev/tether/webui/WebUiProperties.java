package dev.tether.webui;

import java.nio.file.Path;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Where the web UI comes from.
 *
 * @param dir the built UI ({@code index.html} and {@code assets/}), as the desktop app ships it in
 *            {@code resources/web-ui}; {@code bin/executor-sidecar} sets it from {@code EXECUTOR_CLIENT_DIR}. Unset (the
 *            default): no UI is served, and routes outside the API answer 404 as before
 */
@ConfigurationProperties("tether.web-ui")
public record WebUiProperties(@Nullable Path dir) {
}
