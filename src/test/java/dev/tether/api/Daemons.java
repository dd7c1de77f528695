package dev.tether.api;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import dev.tether.TetherApplication;

/**
 * Daemons started in the test JVM as an operator starts them, settings on the command line, on free ports. Start and
 * close them one at a time: daemons in one JVM share Reactor Netty's global event loops.
 */
final class Daemons {

    private Daemons() {
    }

    static ConfigurableApplicationContext start(Path dataDir, String... extra) {
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--tether.data-dir=" + dataDir,
                "--tether.docker.reap-interval=1h", "--spring.main.banner-mode=off"));
        args.addAll(List.of(extra));
        if (args.stream().noneMatch(arg -> arg.startsWith("--tether.api.token="))) {
            args.add("--tether.api.token="); // blank: the daemon's own token file, whatever the environment says
        }
        return new SpringApplicationBuilder(TetherApplication.class).run(args.toArray(String[]::new));
    }

    static int port(ConfigurableApplicationContext context) {
        return Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
    }

    /** The management port when Actuator has one of its own. */
    static int managementPort(ConfigurableApplicationContext context) {
        return Integer.parseInt(context.getEnvironment().getProperty("local.management.port"));
    }
}
