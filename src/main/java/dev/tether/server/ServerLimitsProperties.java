package dev.tether.server;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import io.netty.util.internal.PlatformDependent;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.ConstructorBinding;
import org.springframework.util.unit.DataSize;

import dev.tether.daemon.PropertyChecks;

/**
 * What one connection, one client and the crowd may cost the HTTP server. There is no cap on connections: an idle or
 * slow one costs a file and a few kilobytes, and is closed by its own deadline; a request beyond what the server
 * takes is answered (429 or 503, with {@code Retry-After}), never refused at accept.
 *
 * @param headerTimeout        a connection must send a whole request head (request line and headers) within this, from
 *                             its first byte, or from its opening for its first request; default 10 s
 * @param bodyTimeout          and the whole body within this after its head; default 30 s
 * @param idleTimeout          a keep-alive connection with no request in flight is closed after this; default 5 min
 * @param writeTimeout         a connection with an answer waiting for its client, none of which the client took for this
 *                             long (it reads nothing), is closed; default 60 s
 * @param maxRequests          requests in flight at once, event streams included; one more is answered 503 at once;
 *                             default 4096
 * @param maxRequestsPerClient requests in flight at once from one client (an address, or the one a trusted proxy names);
 *                             one more is answered 429 at once. Loopback clients (the desktop app, the CLI and agents of
 *                             this host's user) and peer replicas are counted only in {@code maxRequests}; default 256
 * @param maxBufferMemory      Netty's buffers (its allocator's use) beyond which new requests are answered 503 until
 *                             requests in flight release theirs; default half the direct memory Netty may use
 * @param trustedProxies       addresses and ranges ({@code 10.0.0.0/8}, {@code ::1}) of proxies whose
 *                             {@code X-Forwarded-For} (or {@code Forwarded}) names the client; none by default
 */
@ConfigurationProperties("tether.server")
public record ServerLimitsProperties(Duration headerTimeout, Duration bodyTimeout, Duration idleTimeout, Duration writeTimeout,
        Integer maxRequests, Integer maxRequestsPerClient, DataSize maxBufferMemory, List<AddressRange> trustedProxies) {

    @ConstructorBinding
    public ServerLimitsProperties(@Nullable Duration headerTimeout, @Nullable Duration bodyTimeout, @Nullable Duration idleTimeout,
            @Nullable Duration writeTimeout, @Nullable Integer maxRequests, @Nullable Integer maxRequestsPerClient,
            @Nullable DataSize maxBufferMemory, String @Nullable [] trustedProxies) {
        this(PropertyChecks.positive("tether.server.header-timeout", headerTimeout, Duration.ofSeconds(10)),
                PropertyChecks.positive("tether.server.body-timeout", bodyTimeout, Duration.ofSeconds(30)),
                PropertyChecks.positive("tether.server.idle-timeout", idleTimeout, Duration.ofMinutes(5)),
                PropertyChecks.positive("tether.server.write-timeout", writeTimeout, Duration.ofSeconds(60)),
                PropertyChecks.atLeastOne("tether.server.max-requests", maxRequests, 4096),
                PropertyChecks.atLeastOne("tether.server.max-requests-per-client", maxRequestsPerClient, 256),
                bufferMemory(maxBufferMemory),
                trustedProxies == null ? List.of()
                        : Arrays.stream(trustedProxies).map(entry -> AddressRange.parse("tether.server.trusted-proxies", entry)).toList());
    }

    private static DataSize bufferMemory(@Nullable DataSize configured) {
        if (configured == null) {
            return DataSize.ofBytes(PlatformDependent.maxDirectMemory() / 2);
        }
        if (configured.toBytes() < 1) {
            throw new IllegalArgumentException("tether.server.max-buffer-memory must be positive, was " + configured);
        }
        return configured;
    }
}
