package dev.tether.onepassword;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * How Tether reaches 1Password: through its {@code op} CLI, as Executor's plugin does.
 *
 * @param cli     the {@code op} command, a name looked up on {@code PATH} or a path; default {@code op}
 * @param timeout how long one {@code op} run may take; default 15 s, Executor's
 */
@ConfigurationProperties("tether.onepassword")
public record OnePasswordProperties(String cli, Duration timeout) {

    public OnePasswordProperties {
        cli = cli == null || cli.isBlank() ? "op" : cli;
        timeout = timeout == null ? Duration.ofSeconds(15) : timeout;
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("tether.onepassword.timeout must be positive, was " + timeout);
        }
    }
}
