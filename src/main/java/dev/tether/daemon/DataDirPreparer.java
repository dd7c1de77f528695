package dev.tether.daemon;

import java.nio.file.Path;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;

/**
 * Prepares the data dir as soon as the settings are known, before any bean (the embedded store above all) creates
 * a file in it: so the dir is {@code 0700} before H2 makes {@code store/}, and an unusable dir stops the start
 * with one line. Registered in {@code META-INF/spring.factories}.
 */
public final class DataDirPreparer implements EnvironmentPostProcessor, Ordered {

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        String dir = environment.getProperty("tether.data-dir");
        DataDir.prepare(dir == null || dir.isBlank() ? new TetherProperties(null).dataDir() : Path.of(dir));
    }

    /** After the config files and the environment have been read. */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
