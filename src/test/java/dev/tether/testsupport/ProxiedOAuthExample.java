package dev.tether.testsupport;

import java.net.URI;
import java.nio.file.Path;

/**
 * The TypeScript SDK's OAuth example ({@link OAuthExampleServer}) with a counting {@link TokenProxy} in front of its
 * token endpoint, as the OAuth tests run it: started together, closed together (the proxy first, whatever failed).
 */
public record ProxiedOAuthExample(OAuthExampleServer example, TokenProxy proxy) implements AutoCloseable {

    public static ProxiedOAuthExample start(Path log) {
        OAuthExampleServer example = OAuthExampleServer.start(log);
        try {
            return new ProxiedOAuthExample(example, TokenProxy.in(URI.create(example.authorizationServer() + "/token")));
        }
        catch (RuntimeException failed) {
            example.close();
            throw failed;
        }
    }

    @Override
    public void close() {
        try {
            proxy.close();
        }
        finally {
            example.close();
        }
    }
}
