package dev.tether.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema.ElicitFormRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitResult;
import io.modelcontextprotocol.spec.McpSchema.ElicitUrlRequest;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/** Where a server's question goes, and the call timeout that stops while the user thinks; in virtual time. */
class CallQuestionsTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Duration BOUND = Duration.ofSeconds(5);
    private static final ElicitFormRequest FORM = new ElicitFormRequest("Your name?", java.util.Map.of("type", "object"), null);

    @Test
    void callTimeoutDoesNotRunWhileAQuestionWaits() {
        Sinks.One<ElicitResult> answer = Sinks.one();
        CallQuestions.Asker asker = new CallQuestions.Asker(request -> answer.asMono());
        StepVerifier.withVirtualTime(() -> Mono.delay(Duration.ofSeconds(30))
                        .then(asker.ask(FORM))
                        .then(Mono.never())
                        .timeout(asker.deadline(TIMEOUT, VirtualTimeScheduler.get())))
                .expectSubscription()
                .expectNoEvent(Duration.ofHours(1)) // the user takes an hour: no timeout
                .then(() -> answer.tryEmitValue(new ElicitResult(ElicitResult.Action.ACCEPT, null)))
                .expectNoEvent(TIMEOUT.minusSeconds(1))
                .thenAwait(Duration.ofSeconds(1)) // a whole timeout after the answer: the clock started again
                .expectError(java.util.concurrent.TimeoutException.class)
                .verify(BOUND);
    }

    @Test
    void callWithoutQuestionsTimesOutAsBefore() {
        CallQuestions.Asker asker = new CallQuestions.Asker(ElicitationHandler.ACCEPT_ALL);
        StepVerifier.withVirtualTime(() -> Mono.never().timeout(asker.deadline(TIMEOUT, VirtualTimeScheduler.get())))
                .expectSubscription()
                .expectNoEvent(TIMEOUT.minusSeconds(1))
                .thenAwait(Duration.ofSeconds(1))
                .expectError(java.util.concurrent.TimeoutException.class)
                .verify(BOUND);
    }

    @Test
    void questionGoesToTheOldestCallThatCanAskAndOtherwiseIsAccepted() {
        CallQuestions questions = new CallQuestions();
        ElicitResult declined = new ElicitResult(ElicitResult.Action.DECLINE, null);
        ElicitResult cancelled = new ElicitResult(ElicitResult.Action.CANCEL, null);

        StepVerifier.create(questions.ask(FORM))
                .assertNext(result -> assertThat(result.action()).isEqualTo(ElicitResult.Action.ACCEPT))
                .expectComplete().verify(BOUND);

        Mono<ElicitResult> both = questions.during(ElicitationHandler.ACCEPT_ALL,
                plain -> questions.during(request -> Mono.just(declined),
                        first -> questions.during(request -> Mono.just(cancelled), second -> questions.ask(FORM))));
        StepVerifier.create(both).expectNext(declined).expectComplete().verify(BOUND);
    }

    @Test
    void urlOtherThanHttpIsRefusedBeforeAnyoneIsAsked() {
        CallQuestions questions = new CallQuestions();
        Mono<ElicitResult> asked = questions.during(request -> Mono.error(new AssertionError("asked")),
                call -> questions.ask(new ElicitUrlRequest("Open it", "javascript:alert(1)", "e1", null)));
        StepVerifier.create(asked)
                .expectErrorSatisfies(error -> assertThat(error).isInstanceOf(McpError.class)
                        .hasMessageContaining("must be http or https, was javascript"))
                .verify(BOUND);
        assertThat(CallQuestions.webUrl("https://example.com/x")).isTrue();
        assertThat(CallQuestions.webUrl("file:///etc/passwd")).isFalse();
        assertThat(CallQuestions.webUrl("http:/no-host")).isFalse();
    }
}
