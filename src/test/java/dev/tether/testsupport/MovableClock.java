package dev.tether.testsupport;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;

/**
 * The system's clock, moved on by a test: a daemon that reads it sees a token expire without the test waiting an
 * hour. {@code @Import(MovableClock.AsTheDaemonsClock.class)} makes it the daemon's clock; autowire it to move it.
 */
public final class MovableClock extends Clock {

    private final AtomicLong offsetMillis = new AtomicLong();

    public void advance(Duration by) {
        offsetMillis.addAndGet(by.toMillis());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public Instant instant() {
        return Instant.now().plusMillis(offsetMillis.get());
    }

    @TestConfiguration
    public static class AsTheDaemonsClock {

        @Bean
        @Primary
        MovableClock movableClock() {
            return new MovableClock();
        }
    }
}
