package dev.tether.api;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The HTTP API.
 *
 * @param token a fixed bearer token; by default one is generated on first start and kept in
 *              {@code <dataDir>/server-control/auth.json}
 */
@ConfigurationProperties("tether.api")
public record ApiProperties(String token) {
}
