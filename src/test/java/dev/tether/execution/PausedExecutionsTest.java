package dev.tether.execution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import java.util.Map;

import io.modelcontextprotocol.spec.McpSchema.ElicitFormRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitResult;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import dev.tether.identity.Principal;
import dev.tether.identity.Via;
import dev.tether.replicas.ReplicaIds;

/**
 * Paused executions are bounded in number and expire, closed when they do (a server's question is then answered
 * {@code cancel} and its call stopped); timed in virtual time.
 */
class PausedExecutionsTest {

    private static final Principal OWNER = Principal.local(Principal.DEFAULT_TENANT, Via.DAEMON_TOKEN);

    /** Names as a replica alone on its store gives them. */
    private static final ReplicaIds NAMES = new ReplicaIds("0a1b2c3d", false);

    private static final Duration EXPIRY = Duration.ofMinutes(15);

    @Test
    void pauseExpiresAndItsExecutionIsClosed() {
        VirtualTimeScheduler time = VirtualTimeScheduler.create();
        PausedExecutions paused = new PausedExecutions(4, EXPIRY, time, NAMES, PausedExecutionsTest::closed);
        Execution execution = execution();
        String id = paused.nextId();
        paused.put(pause(id, execution));

        time.advanceTimeBy(EXPIRY.minusSeconds(1));
        assertThat(paused.view(id, OWNER).text()).isEqualTo("waiting " + id);
        assertThat(execution.closed()).isFalse();

        time.advanceTimeBy(Duration.ofSeconds(1));
        assertThatThrownBy(() -> paused.view(id, OWNER)).isInstanceOf(ExecutionNotFoundException.class);
        assertThatThrownBy(() -> paused.take(id, OWNER)).isInstanceOf(ExecutionNotFoundException.class);
        assertThat(execution.closed()).as("an expired execution frees its context").isTrue();
        assertThat(paused.size()).isZero();
    }

    @Test
    void expiredQuestionIsAnsweredCancelAndItsCallStopped() {
        VirtualTimeScheduler time = VirtualTimeScheduler.create();
        PausedExecutions paused = new PausedExecutions(4, EXPIRY, time, NAMES, PausedExecutionsTest::closed);
        Execution execution = execution();
        execution.attach(Sinks.many().unicast().onBackpressureBuffer());
        Sinks.One<ElicitResult> answer = Sinks.one();
        PendingCall asking = new PendingCall(0, "tools.a.org.default.b", null, "{}", null, null, null, false, null)
                .eliciting(new Elicitation(new ElicitFormRequest("Name?", Map.of("type", "object"), null), answer, Mono.never()));
        execution.ask(asking);
        String id = paused.nextId();
        paused.put(new PausedExecutions.Pause(id, execution, asking, new ExecutionAnswer.Pause("asking " + id, "{}"), OWNER));
        StepVerifier.create(execution.closing()).expectSubscription()
                .then(() -> time.advanceTimeBy(EXPIRY.minusSeconds(1)))
                .expectNoEvent(Duration.ofMillis(10))
                .then(() -> time.advanceTimeBy(Duration.ofSeconds(1)))
                .expectNext(true).expectComplete()
                .verify(Duration.ofSeconds(5));
        StepVerifier.create(answer.asMono())
                .assertNext(result -> assertThat(result.action()).as("the server is told, not left waiting")
                        .isEqualTo(ElicitResult.Action.CANCEL))
                .expectComplete().verify(Duration.ofSeconds(5));
        assertThatThrownBy(() -> paused.take(id, OWNER)).isInstanceOf(ExecutionNotFoundException.class);
    }

    @Test
    void resumedPauseNoLongerExpires() {
        VirtualTimeScheduler time = VirtualTimeScheduler.create();
        PausedExecutions paused = new PausedExecutions(4, EXPIRY, time, NAMES, PausedExecutionsTest::closed);
        Execution execution = execution();
        String id = paused.nextId();
        paused.put(pause(id, execution));

        assertThat(paused.take(id, OWNER).execution()).isSameAs(execution);
        time.advanceTimeBy(EXPIRY.multipliedBy(2));
        assertThat(execution.closed()).as("the resume owns it now").isFalse();
    }

    @Test
    void pausesAreBoundedAndTheirIdsNeverRepeat() {
        PausedExecutions paused = new PausedExecutions(2, EXPIRY, VirtualTimeScheduler.create(), NAMES, PausedExecutionsTest::closed);
        String first = paused.nextId();
        String second = paused.nextId();
        assertThat(first).matches("exec_[a-z2-7]{26}").isNotEqualTo(second);
        paused.put(pause(first, execution()));
        paused.put(pause(second, execution()));
        String third = paused.nextId();
        assertThatThrownBy(() -> paused.put(pause(third, execution())))
                .isInstanceOf(PausedExecutions.TooManyPausedException.class)
                .hasMessageContaining("limit 2");
        assertThat(paused.size()).isEqualTo(2);
    }

    private static PausedExecutions.Pause pause(String id, Execution execution) {
        PendingCall call = new PendingCall(0, "tools.a.org.default.b", null, "{}", null, null, "Approve?", false, null);
        return new PausedExecutions.Pause(id, execution, call, new ExecutionAnswer.Pause("waiting " + id, "{}"), OWNER);
    }

    /** What Executions does with an expired pause, its journal aside: closes its execution. */
    private static void closed(PausedExecutions.Pause pause) {
        pause.execution().close();
    }

    private static Execution execution() {
        return new Execution(ExecutionProperties.defaults(), Schedulers.immediate(), Schedulers.immediate());
    }
}
