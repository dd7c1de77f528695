package dev.tether.replicas;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

import dev.tether.store.secrets.StoreKeys;

/**
 * What proves that a request comes from a peer replica: an HMAC-SHA256 of the request's method, path and query, its
 * sender's instance id and store position, whom it is for (the principal a replica passes a request on for, which
 * decides what the receiver lets it do), the instant it was signed and a random nonce, under a key derived from the
 * store key ({@link StoreKeys}). Every replica holds the store key; no client does (not the CLI, not the desktop
 * app, not a web page: it never leaves the replica's memory and its data dir or secret), so a request that carries a
 * credential that verifies was signed by a replica, for this very request. A credential is good for
 * {@link #WINDOW} either side of its signing, and once: a replayed one is refused. This proves who sent a request, not
 * what it says beyond the signed parts, and keeps nothing secret: the pod network carries the request as it is.
 */
@Component
public final class PeerCredentials {

    /** How far a credential's signing may lie from the receiver's clock: network time keeps replicas far closer. */
    public static final Duration WINDOW = Duration.ofSeconds(30);

    /** The derived key's purpose, and the credential's version. */
    private static final String PURPOSE = "tether peer credential v1";
    private static final String VERSION = "v1";
    private static final int NONCE_BYTES = 16;
    /** Every this many accepted credentials, nonces past the window are forgotten. */
    private static final int SWEEP_EVERY = 1024;
    private static final SecureRandom RANDOM = new SecureRandom();

    /**
     * The parts of a request a credential covers.
     *
     * @param principal whom the request is for, as its header names it; empty for the daemon's own work
     */
    public record SignedRequest(String method, String target, String sender, String position, String principal) {
    }

    private final byte[] key;
    private final Clock clock;
    /** Nonces accepted within the window, with their signing instant: a credential is good once. */
    private final Map<String, Long> seen = new ConcurrentHashMap<>();
    private final AtomicInteger sinceSweep = new AtomicInteger();

    @Autowired
    PeerCredentials(StoreKeys keys, Clock clock) {
        this(keys.derived(PURPOSE), clock);
    }

    PeerCredentials(byte[] key, Clock clock) {
        this.key = key.clone();
        this.clock = clock;
    }

    /** A credential for {@code request}, signed now: {@code v1.<millis>.<nonce>.<mac>}. */
    public String sign(SignedRequest request) {
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        String millis = Long.toString(clock.millis());
        String encodedNonce = Base64.getUrlEncoder().withoutPadding().encodeToString(nonce);
        return VERSION + "." + millis + "." + encodedNonce + "." + mac(request, millis, encodedNonce);
    }

    /**
     * Why {@code credential} does not prove that a peer sent {@code request}, or empty when it does. The MAC is checked
     * first, so that nothing but a peer's credential ever reaches the clock or the nonces.
     */
    public Optional<String> refusal(String credential, SignedRequest request) {
        String[] parts = credential.strip().split("\\.", -1);
        if (parts.length != 4 || !VERSION.equals(parts[0]) || !parts[1].matches("\\d{1,19}")) {
            return Optional.of("the credential is malformed");
        }
        byte[] expected = mac(request, parts[1], parts[2]).getBytes(StandardCharsets.US_ASCII);
        if (!MessageDigest.isEqual(expected, parts[3].getBytes(StandardCharsets.US_ASCII))) {
            return Optional.of("the credential does not verify: every replica must be given the same store key"
                    + " (tether.store.secret-key)");
        }
        long signed = Long.parseLong(parts[1]);
        long now = clock.millis();
        long skew = now - signed;
        if (Math.abs(skew) > WINDOW.toMillis()) {
            return Optional.of("the credential was signed " + Math.abs(skew) + " ms " + (skew > 0 ? "before" : "ahead of")
                    + " this replica's clock, beyond " + WINDOW.toSeconds() + " s: are the replicas' clocks set?");
        }
        if (seen.putIfAbsent(parts[2], signed) != null) {
            return Optional.of("the credential was used before");
        }
        if (sinceSweep.incrementAndGet() % SWEEP_EVERY == 0) {
            seen.values().removeIf(at -> now - at > WINDOW.toMillis());
        }
        return Optional.empty();
    }

    private String mac(SignedRequest request, String millis, String nonce) {
        String signed = String.join("\n", PURPOSE, request.method(), request.target(), request.sender(), request.position(),
                request.principal(), millis, nonce);
        try {
            Mac hmac = Mac.getInstance("HmacSHA256");
            hmac.init(new SecretKeySpec(key, "HmacSHA256"));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(hmac.doFinal(signed.getBytes(StandardCharsets.UTF_8)));
        }
        catch (GeneralSecurityException ex) {
            throw new IllegalStateException("HmacSHA256 is not available in this JVM", ex);
        }
    }
}
