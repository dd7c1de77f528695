package dev.tether.tracing;

import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.micrometer.tracing.autoconfigure.TracingProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Traces cost nothing to record while nobody receives them: unless Zipkin export is on and its exporter is there,
 * every span is sampled out and none is queued (observations make none at all then, {@link UnusedExporters}; this
 * covers a span the tracer is asked for directly). Decided here, at run time, and not by the exporter's presence alone:
 * the packaged daemon's bean definitions are made at build time ({@link TracingDefaults}). Exporting, Spring Boot's
 * rule: a request's parent decides, else {@code management.tracing.sampling.probability}.
 */
@Configuration(proxyBeanMethods = false)
class TracingConfiguration {

    /** Static: a post-processor of bean definitions is made before the beans it acts on, this class among them. */
    @Bean
    static UnusedExporters unusedExporters() {
        return new UnusedExporters();
    }

    @Bean
    Sampler otelSampler(ObjectProvider<SpanExporter> exporters, TracingProperties tracing, Environment environment) {
        if (!TracingDefaults.exporting(environment) || exporters.stream().findAny().isEmpty()) {
            return Sampler.alwaysOff();
        }
        return Sampler.parentBased(Sampler.traceIdRatioBased(tracing.getSampling().getProbability()));
    }
}
