package dev.tether.process;

import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The threads that start children and end them, apart from Reactor's shared pools, so that work elsewhere in the
 * daemon (code of executions, a flood of calls) can never queue in front of a fork/exec or a teardown ladder.
 * Both block on the operating system (fork/exec, closing a pipe a child does not read).
 */
final class ProcessThreads {

    /** fork/exec of new children. */
    static final Scheduler SPAWN = Schedulers.newBoundedElastic(16, 100_000, "tether-spawn", 60, true);
    /** Teardown ladders and the stdin closes they start. */
    static final Scheduler TEARDOWN = Schedulers.newBoundedElastic(16, 100_000, "tether-teardown-work", 60, true);

    private ProcessThreads() {
    }
}
