package dev.tether.arch;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/**
 * Keeps the shape of ARCHITECTURE.md: every package names the packages it may use, data flows down (no cycles, no
 * import that runs back up), processes only in process/, the Docker engine only in docker/, HTTP only at the top.
 */
class ArchitectureTest {

    private static final String ROOT = "dev.tether";

    private static final Pattern SPRING_AOT = Pattern.compile(
            ".*(__(BeanDefinitions|BeanFactoryRegistrations|ApplicationContextInitializer|Autowiring)|\\$\\$SpringCGLIB\\$\\$).*");
    private static final JavaClasses TETHER = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            // Spring AOT's generated bean definitions (`package` writes them into target/classes): not our code, and
            // their registration class calls into every package by design
            .withImportOption(location -> !location.matches(SPRING_AOT))
            .importPackages(ROOT);

    /**
     * Each package (relative to {@code dev.tether}, "" for the root) and the packages it may import, bottom floor
     * first. A new package adds its line here: the test below fails until it does.
     */
    private static final Map<String, Set<String>> ALLOWED = Map.ofEntries(
            allow("daemon"),
            allow("metrics"),
            allow("tracing"),
            allow("store", "daemon"),
            allow("process", "daemon", "tracing"),
            allow("docker", "daemon", "process"),
            allow("replicas", "daemon", "docker", "store"),
            allow("mcp", "daemon", "docker", "process", "tracing"),
            allow("session", "daemon", "mcp", "store", "tracing"),
            allow("catalog", "daemon", "mcp", "metrics", "session", "store"),
            allow("health", "daemon", "mcp", "session", "store"),
            allow("oauth", "catalog", "daemon", "mcp", "session", "store"),
            allow("policy", "store"),
            allow("httpauth"),
            allow("views", "catalog", "httpauth", "store"),
            allow("calls", "calls.builtin", "catalog", "daemon", "http", "mcp", "metrics", "session", "store", "views"),
            allow("calls.builtin", "calls", "catalog", "daemon", "policy", "session", "store", "views"),
            allow("providers", "calls.builtin", "store"),
            allow("onepassword", "calls.builtin", "process", "store"),
            allow("detect", "calls.builtin", "mcp"),
            allow("execution", "calls", "calls.builtin", "daemon", "mcp", "policy", "process", "replicas", "store"),
            allow("liveness", "execution", "process", "store"),
            allow("http", "daemon"),
            allow("openapi", "calls", "catalog", "detect", "http", "store"),
            allow("graphql", "calls", "catalog", "detect", "http", "store"),
            allow("security", "daemon"),
            allow("server", "daemon", "security"),
            allow("webui", "daemon"),
            allow("discovery", "daemon", "process", "security"),
            allow("agent", "calls", "catalog", "daemon", "mcp", "replicas", "security", "store"),
            allow("agent.codemode", "agent", "execution", "replicas", "store"),
            allow("agent.stateless", "agent", "agent.codemode", "calls", "catalog", "daemon", "execution", "mcp", "store"),
            allow("api.input", "store"),
            allow("api", "api.input", "calls", "calls.builtin", "catalog", "daemon", "detect", "execution", "graphql", "health",
                    "http", "httpauth", "liveness", "mcp", "oauth", "onepassword", "openapi", "policy", "process", "providers", "replicas",
                    "security", "session", "store", "views"),
            allow("", "daemon"));

    private static Map.Entry<String, Set<String>> allow(String pkg, String... uses) {
        return Map.entry(pkg, Set.of(uses));
    }

    private static String full(String pkg) {
        return pkg.isEmpty() ? ROOT : ROOT + "." + pkg;
    }

    @Test
    void everyPackageNamesWhatItMayUse() {
        Set<String> packages = TETHER.stream().map(JavaClass::getPackageName).collect(Collectors.toCollection(TreeSet::new));
        Set<String> named = ALLOWED.keySet().stream().map(ArchitectureTest::full).collect(Collectors.toSet());
        assertThat(packages).as("packages without a line in ArchitectureTest.ALLOWED").isSubsetOf(named);
    }

    static Stream<String> packages() {
        return ALLOWED.keySet().stream().sorted();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("packages")
    void packageUsesOnlyWhatItNames(String pkg) {
        String[] permitted = Stream.concat(Stream.of(pkg), ALLOWED.get(pkg).stream())
                .map(ArchitectureTest::full).toArray(String[]::new);
        noClasses().that().resideInAPackage(full(pkg))
                .should().dependOnClassesThat(resideInAPackage(ROOT + "..").and(not(resideInAnyPackage(permitted))))
                .because(full(pkg) + " may use only " + Arrays.toString(permitted))
                .allowEmptyShould(true)
                .check(TETHER);
    }

    @Test
    void featurePackagesHaveNoCycles() {
        slices().matching("dev.tether.(*)..").should().beFreeOfCycles().check(TETHER);
    }

    @Test
    void onlyProcessPackageTouchesOperatingSystemProcesses() {
        noClasses().that().resideOutsideOfPackage("dev.tether.process..")
                .should().dependOnClassesThat().haveFullyQualifiedName(Process.class.getName())
                .orShould().dependOnClassesThat().haveFullyQualifiedName(ProcessBuilder.class.getName())
                .orShould().dependOnClassesThat().haveFullyQualifiedName(ProcessHandle.class.getName())
                .check(TETHER);
    }

    @Test
    void nothingBelowTheApiKnowsHttp() {
        noClasses().that().resideInAnyPackage("dev.tether.process..", "dev.tether.mcp..", "dev.tether.session..",
                        "dev.tether.health..", "dev.tether.catalog..", "dev.tether.store..", "dev.tether.calls..",
                        "dev.tether.execution..", "dev.tether.policy..", "dev.tether.views..")
                .should().dependOnClassesThat().resideInAnyPackage("org.springframework.web..", "org.springframework.http..")
                .check(TETHER);
    }

    @Test
    void onlyDockerPackageTalksToTheDockerEngine() {
        noClasses().that().resideOutsideOfPackage("dev.tether.docker..")
                .should().dependOnClassesThat().resideInAnyPackage("io.netty.channel.unix..")
                .check(TETHER);
    }

    @Test
    void everyPackageIsNullMarked() {
        Set<String> unmarked = TETHER.stream().map(JavaClass::getPackage).distinct()
                .filter(p -> !p.isAnnotatedWith(org.jspecify.annotations.NullMarked.class))
                .map(p -> p.getName()).collect(Collectors.toCollection(TreeSet::new));
        assertThat(unmarked).as("packages without @NullMarked in package-info.java").isEmpty();
    }
}
