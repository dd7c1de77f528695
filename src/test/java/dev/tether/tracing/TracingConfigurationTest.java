package dev.tether.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.handler.TracingObservationHandler;
import io.opentelemetry.exporter.zipkin.ZipkinSpanExporter;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration;
import org.springframework.boot.micrometer.tracing.opentelemetry.autoconfigure.OpenTelemetryTracingAutoConfiguration;
import org.springframework.boot.micrometer.tracing.opentelemetry.autoconfigure.zipkin.ZipkinWithOpenTelemetryTracingAutoConfiguration;
import org.springframework.boot.opentelemetry.autoconfigure.OpenTelemetrySdkAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.zipkin.autoconfigure.ZipkinAutoConfiguration;
import org.springframework.context.aot.AbstractAotProcessor;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import zipkin2.reporter.BytesMessageSender;

/**
 * Spring Boot's tracing auto-configuration as the daemon has it, with Tether's defaults ({@link TracingDefaults}) and
 * sampler ({@link TracingConfiguration}): no exporter and nothing recorded until Zipkin export is turned on; then a
 * Zipkin exporter and Boot's sampling rule, at Tether's default probability of 1. The packaged daemon's bean
 * definitions are made at build time, the exporter's included: there they are dropped at start while export is off.
 */
class TracingConfigurationTest {

    private final ApplicationContextRunner runner = buildTimeDefinitions()
            .withInitializer(context -> new TracingDefaults().postProcessEnvironment(context.getEnvironment(), null));

    @Test
    void offByDefaultNoExporterAndEverySpanSampledOut() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(SpanExporter.class);
            assertThat(context.getBean(Sampler.class)).isEqualTo(Sampler.alwaysOff());
        });
    }

    @Test
    void zipkinExportOnExportsAndSamplesEveryRequestUnlessItsParentSaysNo() {
        runner.withPropertyValues("management.tracing.export.zipkin.enabled=true").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(ZipkinSpanExporter.class);
            assertThat(context.getBean(Sampler.class)).isEqualTo(Sampler.parentBased(Sampler.traceIdRatioBased(1.0)));
        });
    }

    /**
     * The packaged daemon's case: its bean definitions, the exporter's among them, were made at build time. While export
     * is off at run time, none of what exports is made (no HTTP client, no batch processor and its thread).
     */
    @Test
    void anExporterDefinedAtBuildTimeIsNotMadeWhileExportIsOffAtRunTime() {
        buildTimeDefinitions().run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(SpanExporter.class);
            assertThat(context).doesNotHaveBean(BytesMessageSender.class);
            assertThat(context).doesNotHaveBean(BatchSpanProcessor.class);
            assertThat(context.getBean(Sampler.class)).isEqualTo(Sampler.alwaysOff());
        });
    }

    @Test
    void anExporterDefinedAtBuildTimeExportsWhenExportIsOnAtRunTime() {
        buildTimeDefinitions().withPropertyValues(TracingDefaults.ZIPKIN + "=true").run(context -> {
            assertThat(context).hasSingleBean(ZipkinSpanExporter.class);
            assertThat(context).hasSingleBean(BytesMessageSender.class);
            assertThat(context).hasSingleBean(BatchSpanProcessor.class);
            assertThat(context.getBean(Sampler.class)).isNotEqualTo(Sampler.alwaysOff());
            assertThat(context.getBeansOfType(TracingObservationHandler.class)).isNotEmpty();
        });
    }

    /**
     * Off, an observation (a request's, a lease's, a tool call's) makes no span at all, not even one sampled out, and
     * is still timed: the meters are the same whether traces are exported or not.
     */
    @Test
    void exportOffAnObservationMakesNoSpanAndIsStillTimed() {
        buildTimeDefinitions().run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBeansOfType(TracingObservationHandler.class)).isEmpty();
            assertThat(spanInside(context)).as("the current span inside an observation").isFalse();
            assertThat(context.getBean(MeterRegistry.class).get("tether.test").timer().count()).isEqualTo(1);
        });
    }

    @Test
    void exportOnAnObservationMakesASpanAndIsTimed() {
        buildTimeDefinitions().withPropertyValues(TracingDefaults.ZIPKIN + "=true").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(spanInside(context)).as("the current span inside an observation").isTrue();
            assertThat(context.getBean(MeterRegistry.class).get("tether.test").timer().count()).isEqualTo(1);
        });
    }

    /** Whether the tracer sees a span while an observation named {@code tether.test} is open. */
    private static boolean spanInside(AssertableApplicationContext context) {
        Observation observation = Observation.start("tether.test", context.getBean(ObservationRegistry.class));
        try (Observation.Scope scope = observation.openScope()) {
            return context.getBean(Tracer.class).currentSpan() != null;
        }
        finally {
            observation.stop();
        }
    }

    @Test
    void whileAotMakesTheBeanDefinitionsTheExportersStayAmongThem() {
        System.setProperty(AbstractAotProcessor.AOT_PROCESSING, "true");
        try {
            buildTimeDefinitions().run(context -> {
                assertThat(context).hasSingleBean(ZipkinSpanExporter.class);
                assertThat(context).hasSingleBean(BatchSpanProcessor.class);
            });
        }
        finally {
            System.clearProperty(AbstractAotProcessor.AOT_PROCESSING);
        }
    }

    /** Spring Boot's own rule, as at build time: with no setting, its Zipkin exporter is defined (Tether's says off). */
    private static ApplicationContextRunner buildTimeDefinitions() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ObservationAutoConfiguration.class, MetricsAutoConfiguration.class,
                        CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
                        OpenTelemetrySdkAutoConfiguration.class,
                        OpenTelemetryTracingAutoConfiguration.class, MicrometerTracingAutoConfiguration.class,
                        ZipkinAutoConfiguration.class, ZipkinWithOpenTelemetryTracingAutoConfiguration.class))
                .withUserConfiguration(TracingConfiguration.class);
    }

    @Test
    void whileAotMakesTheBeanDefinitionsExportIsLeftOnSoThatTheExporterIsAmongThem() {
        StandardEnvironment building = new StandardEnvironment();
        System.setProperty(AbstractAotProcessor.AOT_PROCESSING, "true");
        try {
            new TracingDefaults().postProcessEnvironment(building, null);
        }
        finally {
            System.clearProperty(AbstractAotProcessor.AOT_PROCESSING);
        }
        assertThat(building.getProperty(TracingDefaults.ZIPKIN)).isNull();
        assertRunning(Map.of(), "false", "limited");
    }

    @Test
    void exportOnAlsoCorrelatesLogLinesAndPropagatesReactorsContext() {
        assertRunning(Map.of(TracingDefaults.ZIPKIN, "true"), "true", "auto");
    }

    /** Tether's defaults below what an operator set: export, log correlation and Reactor's context propagation. */
    private static void assertRunning(Map<String, Object> operator, String exporting, String propagation) {
        StandardEnvironment running = new StandardEnvironment();
        running.getPropertySources().addFirst(new MapPropertySource("operator", operator));
        new TracingDefaults().postProcessEnvironment(running, null);
        assertThat(running.getProperty(TracingDefaults.ZIPKIN)).isEqualTo(exporting);
        assertThat(running.getProperty("logging.expect-correlation-id")).isEqualTo(exporting);
        assertThat(running.getProperty("spring.reactor.context-propagation")).isEqualTo(propagation);
    }

    @Test
    void aProbabilitySetByTheOperatorIsKept() {
        runner.withPropertyValues("management.tracing.export.zipkin.enabled=true", "management.tracing.sampling.probability=0.25")
                .run(context -> assertThat(context.getBean(Sampler.class))
                        .isEqualTo(Sampler.parentBased(Sampler.traceIdRatioBased(0.25))));
    }
}
