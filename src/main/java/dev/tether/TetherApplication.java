package dev.tether;

import java.time.Clock;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.context.annotation.Bean;
import dev.tether.daemon.StartupFailure;
import dev.tether.daemon.StartupFailureReporter;

@SpringBootApplication
@ConfigurationPropertiesScan
public class TetherApplication {

    public static void main(String[] args) {
        try {
            SpringApplication.run(TetherApplication.class, args);
        }
        catch (RuntimeException ex) {
            if (StartupFailure.in(ex).isEmpty()) {
                throw ex;
            }
            // StartupFailureReporter has printed its one line; nothing else to say.
            System.exit(2);
        }
    }

    @Bean
    Clock clock() {
        return Clock.systemUTC();
    }
}
