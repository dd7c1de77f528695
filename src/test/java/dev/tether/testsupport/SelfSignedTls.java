package dev.tether.testsupport;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A TLS certificate for {@code localhost} and {@code 127.0.0.1}, made for one test by the JDK's own {@code keytool}
 * (a PKCS12 key store for a server, e.g. Spring Boot's {@code server.ssl}), with its certificate as PEM for the
 * clients that must trust it (an authorization server's trust store) and as an {@link SSLContext} for the test's own.
 */
public record SelfSignedTls(Path keyStore, String password, Path certificatePem) {

    private static final Duration BOUND = Duration.ofSeconds(60);

    public static SelfSignedTls in(Path directory) {
        Path keyStore = directory.resolve("tls.p12");
        Path pem = directory.resolve("tls.pem");
        String password = "tls-test-" + Long.toHexString(System.nanoTime());
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        run(List.of(keytool.toString(), "-genkeypair", "-alias", "tls", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
                "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-validity", "2", "-storetype", "PKCS12", "-keystore", keyStore.toString(),
                "-storepass", password, "-keypass", password), directory.resolve("keytool.log"));
        run(List.of(keytool.toString(), "-exportcert", "-rfc", "-alias", "tls", "-keystore", keyStore.toString(), "-storepass", password,
                "-file", pem.toString()), directory.resolve("keytool.log"));
        return new SelfSignedTls(keyStore, password, pem);
    }

    /** Trusts this certificate (only). */
    public SSLContext sslContext() {
        try (InputStream in = Files.newInputStream(keyStore)) {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(in, password.toCharArray());
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            return context;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (GeneralSecurityException ex) {
            throw new IllegalStateException(ex);
        }
    }

    private static void run(List<String> command, Path log) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
            if (!process.waitFor(BOUND.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
                fail("keytool did not finish within " + BOUND.toSeconds() + " s");
            }
            if (process.exitValue() != 0) {
                fail("keytool exited with " + process.exitValue() + ": " + Files.readString(log));
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
