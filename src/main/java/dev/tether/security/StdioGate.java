package dev.tether.security;

import java.net.InetAddress;
import java.net.UnknownHostException;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * Registering or changing a stdio server runs an arbitrary command on this host. That is only acceptable
 * when the API is reachable from this host alone, or when the operator said otherwise on purpose
 * ({@code tether.stdio.allow-remote=true}).
 */
@Component
public final class StdioGate {

    private final boolean open;
    private final String bindAddress;

    StdioGate(@Value("${server.address:0.0.0.0}") String bindAddress,
            @Value("${tether.stdio.allow-remote:false}") boolean allowRemote) {
        this.bindAddress = bindAddress;
        this.open = allowRemote || isLoopback(bindAddress);
    }

    public void check() {
        if (!open) {
            throw new StdioNotAllowedException("stdio MCP servers run commands on this host, and this daemon listens on "
                    + bindAddress + ", not only on loopback; set tether.stdio.allow-remote=true to allow it anyway");
        }
    }

    private static boolean isLoopback(String address) {
        try {
            return InetAddress.getByName(address).isLoopbackAddress();
        }
        catch (UnknownHostException ex) {
            return false;
        }
    }
}
