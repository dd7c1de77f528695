package dev.tether.oauth;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * The origin this daemon's API answers on, once its server is bound: where a flow started from code (the built-in
 * {@code oauth.start}, which has no request to take an origin from) sends the browser back to, as Executor sends it
 * to its own. A wildcard bind address is reached over loopback.
 */
@Component
final class LocalOrigin implements ApplicationListener<WebServerInitializedEvent> {

    private final String host;
    private final AtomicReference<String> origin = new AtomicReference<>();

    LocalOrigin(Environment environment) {
        String address = environment.getProperty("server.address", "127.0.0.1").strip().replaceAll("^\\[|\\]$", "");
        boolean wildcard = address.isEmpty() || address.equals("0.0.0.0") || address.equals("::");
        this.host = wildcard ? "127.0.0.1" : address.contains(":") ? "[" + address + "]" : address;
    }

    @Override
    public void onApplicationEvent(WebServerInitializedEvent event) {
        // The actuator may run a server of its own; the callback is on the API's.
        if (event.getApplicationContext().getServerNamespace() == null) {
            origin.set("http://" + host + ":" + event.getWebServer().getPort());
        }
    }

    /** Empty until the API's server is bound. */
    Optional<String> get() {
        return Optional.ofNullable(origin.get());
    }
}
