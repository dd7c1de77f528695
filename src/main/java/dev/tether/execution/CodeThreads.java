package dev.tether.execution;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tether.process.Niceness;

/**
 * Threads that are always started at the daemon's own priority, at most {@code max} at once, named {@code name-N}.
 * The threads that run code ({@code tether-js-N}) are such a pool: every task (one entry into an execution's code)
 * starts at the daemon's priority, so a new {@code return 1} beside 36 endless loops gets a core at once; a task that
 * still runs after {@code demoteAfter} has its thread lowered to nice {@code nice} and takes only the CPU that the
 * daemon and the host leave. With {@code nice} 0 no thread is ever lowered: the executions' host threads
 * ({@code tether-js-host}), which run what surrounds the code, are such a pool.
 *
 * <p>A lowered thread cannot be raised again without privilege, so it ends with its task and a new thread takes its
 * place. Threads inherit their nice value from the thread that starts them: every worker is started by one thread
 * of its own, {@code name-starter}, that is never lowered (a worker started by a lowered worker would be born at
 * nice 19), whichever thread hands the pool a task.
 */
final class CodeThreads implements Executor {

    private static final Logger log = LoggerFactory.getLogger(CodeThreads.class);
    private static final Duration KEEP_ALIVE = Duration.ofSeconds(60);

    private final String name;
    private final int max;
    private final int nice;
    private final Duration demoteAfter;
    private final BlockingQueue<Runnable> tasks = new LinkedBlockingQueue<>();
    private final AtomicInteger live = new AtomicInteger();
    private final AtomicInteger idle = new AtomicInteger();
    private final AtomicInteger ids = new AtomicInteger();
    private final Set<Thread> workers = ConcurrentHashMap.newKeySet();
    private final ThreadPoolExecutor starter;
    private final ScheduledExecutorService demoter;
    private volatile boolean shutdown;

    /** {@code nice} 0 never lowers a thread. */
    CodeThreads(String name, int max, int nice, Duration demoteAfter) {
        this.name = name;
        this.max = max;
        this.nice = nice;
        this.demoteAfter = demoteAfter;
        // Both started now, by the thread that builds the daemon: a thread started later by a lowered worker would be low too.
        this.starter = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                task -> daemon(task, name + "-starter"));
        starter.prestartAllCoreThreads();
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, task -> daemon(task, name + "-demote"));
        timer.setRemoveOnCancelPolicy(true); // most entries end long before their timer
        timer.prestartAllCoreThreads();
        this.demoter = timer;
    }

    @Override
    public void execute(Runnable task) {
        if (shutdown) {
            throw new RejectedExecutionException("the execution threads are shut down");
        }
        tasks.add(task);
        if (idle.get() < tasks.size()) {
            grow();
        }
    }

    /** Threads alive now, running or waiting for a task. */
    int threads() {
        return live.get();
    }

    void shutdownNow() {
        shutdown = true;
        workers.forEach(Thread::interrupt);
        starter.shutdownNow();
        demoter.shutdownNow();
    }

    private void grow() {
        try {
            starter.execute(() -> {
                // Decided on one thread: never more than max, and none while idle ones will take what waits.
                while (!shutdown && idle.get() < tasks.size() && live.get() < max) {
                    live.incrementAndGet();
                    daemon(this::work, name + "-" + ids.incrementAndGet()).start();
                }
            });
        }
        catch (RejectedExecutionException ex) {
            // shut down
        }
    }

    private void work() {
        Thread self = Thread.currentThread();
        workers.add(self);
        Entry entry = new Entry(nice == 0 ? OptionalLong.empty() : Niceness.currentThreadId());
        try {
            while (!shutdown) {
                Runnable task;
                idle.incrementAndGet();
                try {
                    task = tasks.poll(KEEP_ALIVE.toMillis(), TimeUnit.MILLISECONDS);
                }
                catch (InterruptedException ex) {
                    return;
                }
                finally {
                    idle.decrementAndGet();
                }
                if (task == null) {
                    if (tasks.isEmpty()) {
                        return;
                    }
                    continue;
                }
                if (entry.run(task)) {
                    return; // lowered: a fresh thread at the daemon's priority takes the next task
                }
            }
        }
        finally {
            workers.remove(self);
            live.decrementAndGet();
            if (!tasks.isEmpty()) {
                grow();
            }
        }
    }

    private static Thread daemon(Runnable task, String name) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        return thread;
    }

    /** One worker's current task, and whether its thread was lowered while it ran. */
    private final class Entry {

        private final OptionalLong tid;
        private boolean running;
        private boolean lowered;

        Entry(OptionalLong tid) {
            this.tid = tid;
        }

        /** Runs {@code task}; answers whether this thread was lowered meanwhile. */
        boolean run(Runnable task) {
            synchronized (this) {
                running = true;
            }
            ScheduledFuture<?> timer = tid.isPresent() ? schedule() : null;
            try {
                task.run();
            }
            catch (Throwable ex) {
                log.error("a task of {} failed outside its own error handling", name, ex);
            }
            finally {
                if (timer != null) {
                    timer.cancel(false);
                }
            }
            synchronized (this) {
                running = false;
                return lowered;
            }
        }

        private @Nullable ScheduledFuture<?> schedule() {
            try {
                return demoter.schedule(this::lower, demoteAfter.toNanos(), TimeUnit.NANOSECONDS);
            }
            catch (RejectedExecutionException ex) {
                return null; // shut down
            }
        }

        private void lower() {
            synchronized (this) {
                if (!running || lowered) {
                    return;
                }
                lowered = true;
            }
            Niceness.lower(tid.getAsLong(), nice);
        }
    }
}
