package dev.tether.daemon;

import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * A management port of its own listens where the API does, unless {@code management.server.address} says otherwise:
 * Spring Boot would bind it to every interface, so setting {@code management.server.port} on a laptop would expose
 * Actuator, token-free, to the network. (The address cannot simply default to {@code ${server.address}} in
 * application.yaml: Spring Boot refuses a management address while the port is shared.)
 */
public final class ManagementAddress implements EnvironmentPostProcessor {

    private static final String ADDRESS = "management.server.address";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (ManagementPortType.get(environment) == ManagementPortType.DIFFERENT && !environment.containsProperty(ADDRESS)) {
            String api = environment.getProperty("server.address", "127.0.0.1");
            environment.getPropertySources().addLast(new MapPropertySource("tether-management-address", Map.of(ADDRESS, api)));
        }
    }
}
