package dev.tether.execution;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

/**
 * The adapted Truffle {@code LibraryFactory} no longer names the Unsafe method Java 22 removed, and the JVM's verifier
 * accepts it: it is defined and initialized in a loader of its own here. (That GraalJS then runs on Java 25 was
 * checked with the packaged jar: {@code temurin-25 java -jar target/tether-*.jar}.)
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

    @Test
    void onThisJdkNothingIsDefinedBeforeJava22() throws ClassNotFoundException {
        TruffleOnNewerJdks.prepare();
        if (Runtime.version().feature() < 22) {
            assertThat(Class.forName(FACTORY, false, getClass().getClassLoader()).getProtectionDomain().getCodeSource().getLocation()
                    .toString()).as("Truffle's own class").contains("truffle-api");
        }
    }
}
