package dev.tether.execution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;

/** Paused executions are bounded in number and expire, closed when they do; timed in virtual time. */
class PausedExecutionsTest {

    private static final Duration EXPIRY = Duration.ofMinutes(15);

    @Test
    void pauseExpiresAndItsExecutionIsClosed() {
        VirtualTimeScheduler time = VirtualTimeScheduler.create();
        PausedExecutions paused = new PausedExecutions(4, EXPIRY, time);
        Execution execution = execution();
        String id = paused.nextId();
        paused.put(pause(id, execution));

        time.advanceTimeBy(EXPIRY.minusSeconds(1));
        assertThat(paused.view(id).text()).isEqualTo("waiting " + id);
        assertThat(execution.closed()).isFalse();

        time.advanceTimeBy(Duration.ofSeconds(1));
        assertThatThrownBy(() -> paused.view(id)).isInstanceOf(ExecutionNotFoundException.class);
        assertThatThrownBy(() -> paused.take(id)).isInstanceOf(ExecutionNotFoundException.class);
        assertThat(execution.closed()).as("an expired execution frees its context").isTrue();
        assertThat(paused.size()).isZero();
    }

    @Test
    void resumedPauseNoLongerExpires() {
        VirtualTimeScheduler time = VirtualTimeScheduler.create();
        PausedExecutions paused = new PausedExecutions(4, EXPIRY, time);
        Execution execution = execution();
        String id = paused.nextId();
        paused.put(pause(id, execution));

        assertThat(paused.take(id).execution()).isSameAs(execution);
        time.advanceTimeBy(EXPIRY.multipliedBy(2));
        assertThat(execution.closed()).as("the resume owns it now").isFalse();
    }

    @Test
    void pausesAreBoundedAndIdsCountUpAsExecutorsDo() {
        PausedExecutions paused = new PausedExecutions(2, EXPIRY, VirtualTimeScheduler.create());
        String first = paused.nextId();
        String second = paused.nextId();
        assertThat(first).isEqualTo("exec_1");
        assertThat(second).isEqualTo("exec_2");
        paused.put(pause(first, execution()));
        paused.put(pause(second, execution()));
        String third = paused.nextId();
        assertThatThrownBy(() -> paused.put(pause(third, execution())))
                .isInstanceOf(PausedExecutions.TooManyPausedException.class)
                .hasMessageContaining("limit 2");
        assertThat(paused.size()).isEqualTo(2);
    }

    private static PausedExecutions.Pause pause(String id, Execution execution) {
        PendingCall call = new PendingCall("tools.a.org.default.b", null, "{}", null, null, "Approve?", false);
        return new PausedExecutions.Pause(id, execution, call, new ExecutionAnswer.Pause("waiting " + id, "{}"));
    }

    private static Execution execution() {
        return new Execution(ExecutionProperties.defaults(), Schedulers.immediate());
    }
}
