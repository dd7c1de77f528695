package dev.tether.tracing;

import java.util.List;

import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.aot.AbstractAotProcessor;
import org.springframework.core.env.Environment;
import zipkin2.reporter.BytesMessageSender;

/**
 * While export is off, the exporting beans are not made at all: the packaged daemon's bean definitions were fixed at
 * build time with Zipkin's among them ({@link TracingDefaults}), and making them would build, at every start, a
 * {@code java.net.http.HttpClient} with its selector thread and the default TLS context, and a batch span processor
 * with its worker thread, for spans the sampler never records ({@link TracingConfiguration}). Their definitions go
 * before any bean is made; with export on they stay, as built. Not while {@code process-aot} makes the definitions,
 * which must keep them.
 */
final class UnusedExporters implements BeanDefinitionRegistryPostProcessor, EnvironmentAware {

    /** What exports: the exporters, what they send with, and the processor that batches spans for them. */
    private static final List<Class<?>> EXPORTING = List.of(SpanExporter.class, BytesMessageSender.class, BatchSpanProcessor.class);

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
    }
}
