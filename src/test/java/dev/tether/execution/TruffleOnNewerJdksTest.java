package dev.tether.execution;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.graalvm.polyglot.Context;
import org.junit.jupiter.api.Test;

import dev.tether.testsupport.Prerequisites;

/**
 * The adapted Truffle {@code LibraryFactory} no longer names the Unsafe method Java 22 removed, and the JVM's verifier
 * accepts it; on the JDK the tests run on, the engine builds; and on Java 22 or later (the one running, or the newest
 * under {@code /usr/lib/jvm}, as {@code bin/tether} picks it) GraalJS answers in a JVM of its own.
 */
class TruffleOnNewerJdksTest {

    private static final String FACTORY = "com.oracle.truffle.api.library.LibraryFactory";

    @Test
    void adaptedFactoryVerifiesWithoutTheRemovedUnsafeMethod() throws Exception {
        byte[] original;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream(FACTORY.replace('.', '/') + ".class")) {
            original = in.readAllBytes();
        }
        byte[] adapted = TruffleOnNewerJdks.adapt(original);
        assertThat(new String(original, StandardCharsets.ISO_8859_1)).contains("ensureClassInitialized");
        assertThat(new String(adapted, StandardCharsets.ISO_8859_1)).doesNotContain("ensureClassInitialized");

        ClassLoader own = new ClassLoader(getClass().getClassLoader()) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                if (name.equals(FACTORY)) {
                    synchronized (getClassLoadingLock(name)) {
                        Class<?> loaded = findLoadedClass(name);
                        return loaded != null ? loaded : defineClass(name, adapted, 0, adapted.length);
                    }
                }
                return super.loadClass(name, resolve);
            }
        };
        Class<?> factory = Class.forName(FACTORY, true, own);
        assertThat(factory.getClassLoader()).isSameAs(own);
        assertThat(factory.getDeclaredMethod("ensureLibraryInitialized")).isNotNull();
    }

    /** Before Java 22 Truffle's own class is used untouched; from 22 on only the adapted one lets the engine build. */
    @Test
    void onThisJdkTheEngineBuildsWithTheFactoryItNeeds() throws ClassNotFoundException {
        TruffleOnNewerJdks.prepare();
        if (Runtime.version().feature() < 22) {
            assertThat(Class.forName(FACTORY, false, getClass().getClassLoader()).getProtectionDomain().getCodeSource().getLocation()
                    .toString()).as("Truffle's own class").contains("truffle-api");
        }
        try (Context context = new JsEngine(ExecutionProperties.defaults()).newContext()) {
            assertThat(context.eval("js", "6 * 7").asInt()).isEqualTo(42);
        }
    }

    @Test
    void onJava22OrLaterGraalJsRuns() throws IOException, InterruptedException {
        Optional<Path> java = java22OrLater();
        Prerequisites.require(java.isPresent(), "no Java 22 or later here (the JDK that runs the tests, or one under /usr/lib/jvm)",
                ".ci/run installs Temurin 25 where there is none");
        Process run = new ProcessBuilder(java.get().toString(), "-cp", System.getProperty("java.class.path"),
                GraalJsOnThisJdk.class.getName()).redirectErrorStream(true).start();
        assertThat(run.waitFor(120, TimeUnit.SECONDS)).as("GraalJS on " + java.get() + " ended").isTrue();
        String output = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(output).as("what %s said", java.get()).containsPattern("java (2[2-9]|[3-9]\\d): 42");
        assertThat(run.exitValue()).as(output).isZero();
    }

    /** This JVM if it is Java 22 or later, else the newest such JDK under /usr/lib/jvm, as bin/tether looks. */
    private static Optional<Path> java22OrLater() throws IOException {
        if (Runtime.version().feature() >= 22) {
            return Optional.of(Path.of(System.getProperty("java.home"), "bin", "java"));
        }
        Path jvms = Path.of("/usr/lib/jvm");
        if (!Files.isDirectory(jvms)) {
            return Optional.empty();
        }
        try (Stream<Path> homes = Files.list(jvms)) {
            return homes.filter(home -> Files.isExecutable(home.resolve("bin/java")))
                    .filter(home -> feature(home) >= 22)
                    .max(Comparator.comparingInt(TruffleOnNewerJdksTest::feature))
                    .map(home -> home.resolve("bin/java"));
        }
    }

    /** The feature version in a JDK's release file; 0 when it has none. */
    private static int feature(Path home) {
        try {
            List<String> release = Files.readAllLines(home.resolve("release"));
            return release.stream().filter(line -> line.startsWith("JAVA_VERSION=")).findFirst()
                    .map(line -> line.replaceAll("^JAVA_VERSION=\"(1\\.)?(\\d+).*", "$2")).map(Integer::parseInt).orElse(0);
        }
        catch (IOException | NumberFormatException ex) {
            return 0;
        }
    }
}
