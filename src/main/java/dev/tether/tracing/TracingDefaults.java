package dev.tether.tracing;

import java.util.HashMap;
import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.context.aot.AbstractAotProcessor;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;

/**
 * Tether's defaults for Spring Boot's tracing knobs, below every source a user sets: Zipkin export off (Boot's default
 * would send to {@code localhost:9411} as soon as the exporter is on the class path), and every request traced once it
 * is on (Boot samples 10 %: an operator who turns tracing on to follow a request expects to find it). Log lines carry
 * {@code [traceId-spanId]} only while export is on, and only then is Reactor's context copied to each thread's
 * (automatic context propagation, which costs on every operator): off, the log keeps its width and the pipelines their
 * pace.
 *
 * <p>Not while {@code process-aot} makes the bean definitions the packaged daemon starts from: those are fixed at build
 * time, and the Zipkin exporter must be among them for a setting at run time to turn it on. Whether spans are recorded
 * is then the sampler's decision at run time ({@link TracingConfiguration}).
 */
public final class TracingDefaults implements EnvironmentPostProcessor {

    static final String ZIPKIN = "management.tracing.export.zipkin.enabled";
    /** The property source Spring Boot's log correlation adds; Tether's defaults go before it, to win over its one. */
    private static final String BOOT_LOG_CORRELATION = "logCorrelation";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        boolean on = environment.getProperty(ZIPKIN, Boolean.class, false);
        Map<String, Object> defaults = new HashMap<>(Map.of(
                "management.tracing.sampling.probability", "1.0",
                "logging.expect-correlation-id", Boolean.toString(on),
                "spring.reactor.context-propagation", on ? "auto" : "limited"));
        if (!Boolean.getBoolean(AbstractAotProcessor.AOT_PROCESSING)) {
            defaults.put(ZIPKIN, "false");
        }
        MapPropertySource source = new MapPropertySource("tether-tracing-defaults", defaults);
        MutablePropertySources sources = environment.getPropertySources();
        if (sources.contains(BOOT_LOG_CORRELATION)) {
            sources.addBefore(BOOT_LOG_CORRELATION, source);
        }
        else {
            sources.addLast(source);
        }
    }

    /** Whether spans are to be exported: Zipkin export on, as the settings say at run time. */
    static boolean exporting(Environment environment) {
        return environment.getProperty(ZIPKIN, Boolean.class, false);
    }
}
