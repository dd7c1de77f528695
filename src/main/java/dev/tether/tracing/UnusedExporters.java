package dev.tether.tracing;

import java.util.List;

import io.micrometer.tracing.handler.TracingObservationHandler;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationHandlerGroup;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.aot.AbstractAotProcessor;
import org.springframework.core.env.Environment;
import zipkin2.reporter.BytesMessageSender;

/**
 * While export is off, the exporting beans are not made at all: the packaged daemon's bean definitions were fixed at
 * build time with Zipkin's among them ({@link TracingDefaults}), and making them would build, at every start, a
 * {@code java.net.http.HttpClient} with its selector thread and the default TLS context, and a batch span processor
 * with its worker thread, for spans the sampler never records ({@link TracingConfiguration}). Nor are the handlers that
 * make spans of observations, and their group, which wraps the meters' handler: a span sampled out still cost every
 * observation (each request's, each lease's and tool call's) a span, its scope and the W3C context read and written,
 * about a tenth of a warm tool call's CPU. Without them an observation times its meters only, as with no tracing on the
 * class path. Their definitions go before any bean is made; with export on they stay, as built. Not while
 * {@code process-aot} makes the definitions, which must keep them.
 */
final class UnusedExporters implements BeanDefinitionRegistryPostProcessor, EnvironmentAware {

    /** What exports: the exporters, what they send with, the processor that batches spans for them, the handlers that make them. */
    private static final List<Class<?>> EXPORTING = List.of(SpanExporter.class, BytesMessageSender.class, BatchSpanProcessor.class,
            TracingObservationHandler.class);
    private static final String TRACING_GROUP = "tracingObservationHandlerGroup";
    private static final String TRACING_PACKAGE = "org.springframework.boot.micrometer.tracing.";

    private boolean exporting = true;

    @Override
    public void setEnvironment(Environment environment) {
        exporting = TracingDefaults.exporting(environment) || Boolean.getBoolean(AbstractAotProcessor.AOT_PROCESSING);
    }

    @Override
    public void postProcessBeanDefinitionRegistry(BeanDefinitionRegistry registry) {
        if (exporting || !(registry instanceof ConfigurableListableBeanFactory beans)) {
            return;
        }
        for (Class<?> type : EXPORTING) {
            for (String name : beans.getBeanNamesForType(type, true, false)) {
                registry.removeBeanDefinition(name);
            }
        }
        for (String name : beans.getBeanNamesForType(ObservationHandlerGroup.class, true, false)) {
            if (tracing(name, beans.getType(name, false), registry.getBeanDefinition(name).getFactoryBeanName())) {
                registry.removeBeanDefinition(name);
            }
        }
    }

    /**
     * Spring Boot's group of tracing handlers, the one that also takes the meters' handler in: its class is not public
     * and its factory method declares the interface, so it is known by where it is made.
     */
    private static boolean tracing(String name, @Nullable Class<?> type, @Nullable String factory) {
        return name.equals(TRACING_GROUP) || type != null && type.getName().startsWith(TRACING_PACKAGE)
                || factory != null && factory.startsWith(TRACING_PACKAGE);
    }
}
