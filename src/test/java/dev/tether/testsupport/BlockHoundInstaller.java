package dev.tether.testsupport;

import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestPlan;
import reactor.blockhound.BlockHound;

/**
 * Installs BlockHound in the JVM that runs the tests, before the first of them: a test whose code blocks a non-blocking
 * thread (an event loop, the parallel scheduler) fails. When the tests start rather than when the listener is loaded:
 * with more than one fork, surefire also builds a launcher in Maven's own JVM to find the classes it hands out, and
 * installing there fails (that JVM runs without {@code -XX:+AllowRedefinitionToAddDeleteMethods}).
 */
public final class BlockHoundInstaller implements TestExecutionListener {

    private static final AtomicBoolean installed = new AtomicBoolean();

    @Override
    public void testPlanExecutionStarted(TestPlan testPlan) {
        if (installed.compareAndSet(false, true)) {
            BlockHound.install();
        }
    }
}
