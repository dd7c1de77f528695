package dev.tether.replicas;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import dev.tether.replicas.PeerCredentials.SignedRequest;

/**
 * A peer's credential proves one request, once, signed with the key every replica derives from the store key: another
 * key, another part of the request, a second use or a signing instant beyond the window is refused, with a reason.
 */
class PeerCredentialsTest {

    private static final byte[] KEY = "thirty-two bytes of a derived key".substring(0, 32).getBytes(StandardCharsets.US_ASCII);
    private static final SignedRequest CHECK = new SignedRequest("POST", "/api/connections/org/a/default/health", "peer0001", "17", "");

    private static final Instant SIGNED = Instant.parse("2026-12-04T12:00:00Z");

    private final Clock clock = Clock.fixed(SIGNED, ZoneOffset.UTC);
    private final PeerCredentials sender = new PeerCredentials(KEY, clock);
    private final PeerCredentials receiver = new PeerCredentials(KEY, clock);

    @Test
    void aCredentialProvesItsOwnRequestOnce() {
        String credential = sender.sign(CHECK);
        assertThat(receiver.refusal(credential, CHECK)).isEmpty();
        assertThat(receiver.refusal(credential, CHECK)).hasValue("the credential was used before");
        assertThat(receiver.refusal(sender.sign(CHECK), CHECK)).as("a fresh credential for the same request").isEmpty();
    }

    @Test
    void aCredentialProvesNoOtherRequest() {
        String credential = sender.sign(CHECK);
        for (SignedRequest other : new SignedRequest[] {
                new SignedRequest("GET", CHECK.target(), CHECK.sender(), CHECK.position(), CHECK.principal()),
                new SignedRequest(CHECK.method(), "/api/replicas/calls", CHECK.sender(), CHECK.position(), CHECK.principal()),
                new SignedRequest(CHECK.method(), CHECK.target() + "?x=1", CHECK.sender(), CHECK.position(), CHECK.principal()),
                new SignedRequest(CHECK.method(), CHECK.target(), "peer0002", CHECK.position(), CHECK.principal()),
                new SignedRequest(CHECK.method(), CHECK.target(), CHECK.sender(), "999999", CHECK.principal()),
                new SignedRequest(CHECK.method(), CHECK.target(), CHECK.sender(), CHECK.position(), "default;alice;member;OIDC;;")}) {
            assertThat(receiver.refusal(credential, other)).as(other.toString()).get().asString().contains("does not verify");
        }
        assertThat(receiver.refusal(credential, CHECK)).as("refusals consumed nothing").isEmpty();
    }

    @Test
    void aReplicaWithAnotherStoreKeyIsNoPeer() {
        byte[] other = KEY.clone();
        other[0] ^= 1;
        assertThat(new PeerCredentials(other, clock).refusal(sender.sign(CHECK), CHECK)).get().asString()
                .contains("does not verify", "tether.store.secret-key");
    }

    @Test
    void aCredentialIsGoodWithinTheWindowEitherSideOfItsSigning() {
        Duration window = PeerCredentials.WINDOW;
        assertThat(receivedAfter(window)).as("received at the window's end").isEmpty();
        assertThat(receivedAfter(window.plusMillis(1))).get().asString().contains("beyond 30 s", "clocks");
        assertThat(receivedAfter(window.negated())).as("signed by a clock a whole window ahead").isEmpty();
        assertThat(receivedAfter(window.negated().minusMillis(1))).get().asString().contains("beyond 30 s");
    }

    /** Why a receiver whose clock reads {@code later} past the signing refuses a credential, if it does. */
    private Optional<String> receivedAfter(Duration later) {
        return new PeerCredentials(KEY, Clock.fixed(SIGNED.plus(later), ZoneOffset.UTC)).refusal(sender.sign(CHECK), CHECK);
    }

    @Test
    void aMalformedCredentialIsRefusedAsSuch() {
        for (String malformed : new String[] {"", "v1", "v2.1.n.m", "v1.x.n.m", "v1.1.n", "v1.1.n.m.extra"}) {
            assertThat(receiver.refusal(malformed, CHECK)).as(malformed).hasValue("the credential is malformed");
        }
    }
}
