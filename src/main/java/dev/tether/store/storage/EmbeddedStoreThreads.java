package dev.tether.store.storage;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

import io.r2dbc.spi.Batch;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.Result;
import io.r2dbc.spi.Statement;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.stereotype.Component;
import org.springframework.util.ClassUtils;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Runs an embedded H2 store on threads of its own ({@code tether-h2}): r2dbc-h2 runs H2, which is
 * synchronous, on whichever thread subscribes to a statement, which would otherwise be an event loop or a parallel
 * thread, blocked for the statement's file I/O. Every Publisher the R2DBC SPI answers (a connection, a statement's
 * results, a result's rows, a commit, a close) is subscribed to and asked for more on that scheduler, and what the SPI
 * hands out (connections, statements, batches, results) is wrapped the same way. A proxy rather than a hand-written
 * decorator of each SPI interface: the rule is the same for every method. PostgreSQL's driver does not block and is
 * left as it is.
 */
@Component
final class EmbeddedStoreThreads implements BeanPostProcessor {

    /**
     * A thread for each statement in flight, made when one is needed and gone after a minute idle. Not a fixed
     * number: a statement that waits for another transaction's lock holds its thread, and when the losers of an
     * insert race held all four, the winner's commit found none and H2's lock timeout failed them all. The
     * connection pool bounds the statements in flight ({@code spring.r2dbc.pool.max-size}), and so the threads.
     * Trampolined: what one subscription asks runs in order. Daemon threads: statements still running when the
     * daemon exits are H2's to recover, as after a kill.
     */
    private static final Scheduler H2 = Schedulers.fromExecutor(Executors.newCachedThreadPool(new ThreadFactory() {
        private final AtomicInteger made = new AtomicInteger();

        @Override
        public Thread newThread(Runnable task) {
            Thread thread = new Thread(task, "tether-h2-" + made.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        }
    }), true);

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        return bean instanceof ConnectionFactory factory ? onOwnThreads(factory) : bean;
    }

    /** {@code factory} on the store's own threads when it is H2's (or a pool of H2 connections), else as it is. */
    static ConnectionFactory onOwnThreads(ConnectionFactory factory) {
        return "H2".equals(factory.getMetadata().getName()) ? (ConnectionFactory) wrap(factory) : factory;
    }

    private static Object wrap(Object target) {
        Class<?>[] interfaces = ClassUtils.getAllInterfacesForClass(target.getClass(), EmbeddedStoreThreads.class.getClassLoader());
        return Proxy.newProxyInstance(EmbeddedStoreThreads.class.getClassLoader(), interfaces, new OnOwnThreads(target));
    }

    private static Object wrapped(Object value) {
        return value instanceof Connection || value instanceof Statement || value instanceof Batch || value instanceof Result
                ? wrap(value) : value;
    }

    private record OnOwnThreads(Object target) implements InvocationHandler {

        @Override
        public @Nullable Object invoke(Object proxy, Method method, Object @Nullable [] args) throws Throwable {
            if (method.getDeclaringClass() == Object.class) {
                return switch (method.getName()) {
                    case "equals" -> proxy == Objects.requireNonNull(args)[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    default -> method.invoke(target, args);
                };
            }
            if (method.getName().equals("unwrap")) {
                // What this wraps is the target itself (Boot finds the connection pool below for its metrics).
                if (args == null || args.length == 0 || args[0] instanceof Class<?> type && type.isInstance(target)) {
                    return target;
                }
            }
            Object result;
            try {
                result = method.invoke(target, args);
            }
            catch (InvocationTargetException ex) {
                throw ex.getCause();
            }
            if (result == target) {
                return proxy; // a statement's fluent bind(...)
            }
            // A Mono stays a Mono: a caller that reads one value of a Flux cancels it after that value, and the
            // connection pool takes a cancel after its connection was handed over as "give it back", so two callers
            // came to share one connection and its transaction (two inserts of one key were both answered 200).
            if (result instanceof Mono<?> single) {
                return single.map(EmbeddedStoreThreads::wrapped).subscribeOn(H2);
            }
            if (result instanceof Publisher<?> publisher) {
                return Flux.from(publisher).map(EmbeddedStoreThreads::wrapped).subscribeOn(H2);
            }
            return wrapped(result);
        }
    }
}
