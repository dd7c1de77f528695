package dev.tether.detect;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * How long recognising a URL may take.
 *
 * @param timeout the bound of each plugin's look at a URL (an MCP connection, a probe request); default 10 s
 */
@ConfigurationProperties("tether.detect")
public record DetectProperties(Duration timeout) {

    public DetectProperties {
        timeout = timeout == null ? Duration.ofSeconds(10) : timeout;
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("tether.detect.timeout must be positive, was " + timeout);
        }
    }
}
