package dev.tether.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.springframework.http.codec.ServerSentEvent;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** Keep-alive comments of agent streams, on virtual time: at once, then every period, and never after the end. */
class AgentEventsTest {

    private static final Duration BOUND = Duration.ofSeconds(5);
    private final AgentEvents events = new AgentEvents(null, Duration.ofSeconds(15));

    @Test
    void aQuietStreamSendsACommentAtOnceThenEveryPeriod() {
        StepVerifier.withVirtualTime(() -> events.keptAlive(Flux.never()))
                .assertNext(AgentEventsTest::isKeepAlive)
                .expectNoEvent(Duration.ofSeconds(15).minusMillis(1))
                .thenAwait(Duration.ofMillis(1))
                .assertNext(AgentEventsTest::isKeepAlive)
                .thenAwait(Duration.ofSeconds(15))
                .assertNext(AgentEventsTest::isKeepAlive)
                .thenCancel()
                .verify(BOUND);
    }

    @Test
    void theCommentsEndWithTheEvents() {
        StepVerifier.withVirtualTime(() -> events.keptAlive(Flux.interval(Duration.ofSeconds(20)).take(2)
                        .map(tick -> ServerSentEvent.<String>builder().data("event " + tick).build())))
                .assertNext(AgentEventsTest::isKeepAlive)
                .thenAwait(Duration.ofSeconds(15))
                .assertNext(AgentEventsTest::isKeepAlive)
                .thenAwait(Duration.ofSeconds(5))
                .assertNext(event -> assertThat(event.data()).isEqualTo("event 0"))
                .thenAwait(Duration.ofSeconds(10))
                .assertNext(AgentEventsTest::isKeepAlive)
                .thenAwait(Duration.ofSeconds(10))
                .assertNext(event -> assertThat(event.data()).isEqualTo("event 1"))
                .expectComplete()
                .verify(BOUND);
    }

    private static void isKeepAlive(ServerSentEvent<String> event) {
        assertThat(event.comment()).isEqualTo("keep-alive");
        assertThat(event.data()).isNull();
    }
}
