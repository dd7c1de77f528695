package dev.tether.arch;

import static com.tngtech.archunit.base.DescribedPredicate.alwaysTrue;
import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import dev.tether.testsupport.Fixture;

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
     * first. A new package adds its line here and its row to docs/architecture.md's rooms table: the tests below fail
     * until it does both.
     */
    private static final Map<String, Set<String>> ALLOWED = Map.ofEntries(
            allow("daemon"),
            allow("metrics"),
            allow("identity"),
            allow("tracing"),
            allow("store.changes"),
            allow("store", "daemon", "identity"),
            allow("store.secrets", "daemon", "identity", "store"),
            allow("store.leases", "store"),
            allow("store.storage", "daemon", "identity", "store", "store.changes", "store.secrets"),
            allow("process", "daemon", "tracing"),
            allow("docker", "daemon", "process"),
            allow("replicas", "daemon", "docker", "store", "store.leases", "store.secrets"),
            allow("mcp", "daemon", "docker", "process", "tracing"),
            allow("session", "daemon", "mcp", "store", "tracing"),
            allow("catalog", "daemon", "mcp", "metrics", "session", "store"),
            allow("health", "daemon", "identity", "mcp", "session", "store"),
            allow("oauth", "api.input", "calls.builtin", "catalog", "daemon", "identity", "mcp", "session", "store", "views"),
            allow("policy", "identity", "store"),
            allow("httpauth"),
            allow("views", "catalog", "httpauth", "store"),
            allow("calls", "calls.builtin", "catalog", "daemon", "http", "identity", "mcp", "metrics", "policy", "session", "store",
                    "views"),
            allow("calls.builtin", "api.input", "catalog", "daemon", "http", "identity", "policy", "session", "store", "views"),
            allow("providers", "calls.builtin", "store"),
            allow("onepassword", "calls.builtin", "process", "store"),
            allow("detect", "calls.builtin", "mcp"),
            allow("execution", "calls", "calls.builtin", "daemon", "identity", "mcp", "policy", "process", "replicas", "store"),
            allow("liveness", "execution", "process", "store"),
            allow("http", "daemon"),
            allow("openapi", "api.input", "calls", "calls.builtin", "catalog", "detect", "http", "store"),
            allow("graphql", "api.input", "calls", "calls.builtin", "catalog", "detect", "http", "store"),
            allow("security", "daemon"),
            allow("server", "daemon", "security"),
            allow("webui", "daemon"),
            allow("discovery", "daemon", "process", "security"),
            allow("agent", "calls", "catalog", "daemon", "identity", "mcp", "replicas", "security", "store"),
            allow("agent.codemode", "agent", "execution", "identity", "replicas", "store"),
            allow("agent.stateless", "agent", "agent.codemode", "calls", "catalog", "daemon", "execution", "mcp", "store",
                    "store.secrets"),
            allow("api.input", "identity", "store"),
            allow("users", "daemon", "docker", "identity", "security", "store"),
            allow("replicas.forwarding", "api.input", "calls", "catalog", "execution", "health", "http", "identity", "mcp", "replicas",
                    "security", "session", "store", "store.changes", "store.leases", "views"),
            allow("api", "api.input", "calls", "calls.builtin", "catalog", "daemon", "detect", "execution", "graphql", "health",
                    "http", "httpauth", "identity", "liveness", "mcp", "oauth", "onepassword", "openapi", "policy", "process",
                    "providers", "replicas", "replicas.forwarding", "security", "session", "store", "users", "views"),
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

    /**
     * Whole features use one another one way. {@code replicas.forwarding} is left out of its feature's slice: it sits
     * above the features it forwards for ({@code execution}, {@code calls}, …), while {@code replicas} sits below them,
     * so one slice for both would be a circle that no package makes; {@link #noPackageCyclesSubpackagesIncluded} and
     * its line in {@link #ALLOWED} hold it instead. Uses of {@code api.input} are left out for the same reason: the
     * checks of a request's input sit on a low floor, where the features whose built-ins are twins of routes check
     * their arguments as the routes do, while {@code api} sits above every feature.
     */
    @Test
    void featurePackagesHaveNoCycles() {
        slices().matching("dev.tether.(*)..").should().beFreeOfCycles()
                .ignoreDependency(resideInAPackage(ROOT + ".replicas.forwarding"), alwaysTrue())
                .ignoreDependency(alwaysTrue(), resideInAPackage(ROOT + ".api.input"))
                .check(TETHER);
    }

    /** A row of docs/architecture.md's rooms table: {@code | floor | `package` | what lives there | may use |}. */
    private record Room(int floor, String pkg, Set<String> uses, String row) {
    }

    private static final Pattern BACKTICKED = Pattern.compile("`([^`]*)`");

    private static List<Room> rooms() throws IOException {
        List<String> lines = Files.readAllLines(Fixture.projectRoot().resolve("docs/architecture.md"));
        int header = lines.indexOf("| floor | package | what lives there | may use |");
        assertThat(header).as("docs/architecture.md's rooms table, headed | floor | package | what lives there | may use |")
                .isNotNegative();
        List<Room> rooms = new ArrayList<>();
        for (String row : lines.subList(header + 2, lines.size())) {
            if (!row.startsWith("|")) {
                break;
            }
            String[] cells = row.split("\\|", -1);
            assertThat(cells).as("a row of five cells: %s", row).hasSize(6);
            Matcher pkg = BACKTICKED.matcher(cells[2]);
            assertThat(pkg.find()).as("a package in backticks: %s", row).isTrue();
            Set<String> uses = new TreeSet<>();
            Matcher used = BACKTICKED.matcher(cells[4]);
            while (used.find()) {
                uses.add(relative(used.group(1)));
            }
            assertThat(uses.isEmpty() == cells[4].strip().equals("nothing")).as("either packages in backticks or \"nothing\": %s", row)
                    .isTrue();
            rooms.add(new Room(Integer.parseInt(cells[1].strip()), relative(pkg.group(1)), uses, row));
        }
        return rooms;
    }

    @Test
    void theRoomsTableSaysWhatAllowedSays() throws IOException {
        List<Room> rooms = rooms();
        Map<String, Room> byPackage = new TreeMap<>();
        for (Room room : rooms) {
            assertThat(byPackage.put(room.pkg(), room)).as("docs/architecture.md lists %s twice", room.pkg()).isNull();
        }
        assertThat(byPackage.keySet()).as("packages of ArchitectureTest.ALLOWED in docs/architecture.md's rooms table")
                .containsExactlyInAnyOrderElementsOf(ALLOWED.keySet());
        for (Room room : rooms) {
            assertThat(room.uses()).as("docs/architecture.md's row against ArchitectureTest.ALLOWED.get(\"%s\"): %s", room.pkg(), room.row())
                    .isEqualTo(ALLOWED.get(room.pkg()));
            for (String used : room.uses()) {
                Room below = byPackage.get(used);
                assertThat(below.floor() < room.floor())
                        .as("%s (floor %d) uses %s on floor %d: %s", room.pkg(), room.floor(), used, below.floor(), room.row()).isTrue();
            }
        }
    }

    private static final Pattern NAMED = Pattern.compile("\\bdev\\.tether((?:\\.[a-z]\\w*)*)\\.[A-Z]");

    /**
     * The packages each package names in its source: imports, fully qualified names and Javadoc links. The class files
     * miss some of them (a constant is inlined where it is used, an import only a Javadoc link needs is dropped), and
     * such a name still ties the two packages together for whoever reads or moves them.
     */
    private static Map<String, Set<String>> namedInSource() throws IOException {
        Path sources = Fixture.projectRoot().resolve("src/main/java");
        Map<String, Set<String>> named = new TreeMap<>();
        try (Stream<Path> files = Files.walk(sources)) {
            for (Path file : files.filter(path -> path.toString().endsWith(".java")).toList()) {
                String pkg = relative(sources.relativize(file.getParent()).toString().replace(file.getFileSystem().getSeparator(), "."));
                Set<String> used = named.computeIfAbsent(pkg, any -> new TreeSet<>());
                for (String line : Files.readAllLines(file)) {
                    if (line.startsWith("package ")) {
                        continue;
                    }
                    Matcher name = NAMED.matcher(line);
                    while (name.find()) {
                        used.add(name.group(1).isEmpty() ? "" : name.group(1).substring(1));
                    }
                }
            }
        }
        return named;
    }

    @Test
    void sourceNamesOnlyWhatItMayUse() throws IOException {
        List<String> wrong = new ArrayList<>();
        namedInSource().forEach((pkg, used) -> used.stream()
                .filter(other -> !other.equals(pkg) && !ALLOWED.getOrDefault(pkg, Set.of()).contains(other))
                .forEach(other -> wrong.add("'" + pkg + "' names '" + other + "'")));
        assertThat(wrong).as("names in src/main/java of packages that ArchitectureTest.ALLOWED does not let them use").isEmpty();
    }

    @Test
    void noPackageCyclesSubpackagesIncluded() throws IOException {
        Map<String, Set<String>> uses = new TreeMap<>();
        namedInSource().forEach((pkg, used) -> uses.computeIfAbsent(pkg, any -> new TreeSet<>()).addAll(used));
        for (JavaClass type : TETHER) {
            Set<String> used = uses.computeIfAbsent(relative(type.getPackageName()), any -> new TreeSet<>());
            type.getDirectDependenciesFromSelf().stream()
                    .map(dependency -> dependency.getTargetClass().getPackageName())
                    .filter(target -> target.equals(ROOT) || target.startsWith(ROOT + "."))
                    .map(ArchitectureTest::relative)
                    .forEach(used::add);
        }
        assertThat(cycles(uses)).as("package cycles (sets of packages that use one another)").isEmpty();
        assertThat(cycles(ALLOWED)).as("cycles that ArchitectureTest.ALLOWED permits").isEmpty();
    }

    /** {@code pkg} relative to {@code dev.tether} ("" for the root); a name already relative is kept. */
    private static String relative(String pkg) {
        return pkg.equals(ROOT) ? "" : pkg.startsWith(ROOT + ".") ? pkg.substring(ROOT.length() + 1) : pkg;
    }

    /** The strongly connected parts of more than one package of the graph {@code uses} (Tarjan's algorithm). */
    static Set<Set<String>> cycles(Map<String, Set<String>> uses) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new HashSet<>();
        Set<Set<String>> found = new HashSet<>();
        for (String start : uses.keySet()) {
            if (!index.containsKey(start)) {
                connect(start, uses, index, low, stack, onStack, found);
            }
        }
        return found;
    }

    private static void connect(String pkg, Map<String, Set<String>> uses, Map<String, Integer> index, Map<String, Integer> low,
            Deque<String> stack, Set<String> onStack, Set<Set<String>> found) {
        index.put(pkg, index.size());
        low.put(pkg, index.get(pkg));
        stack.push(pkg);
        onStack.add(pkg);
        for (String next : uses.getOrDefault(pkg, Set.of())) {
            if (next.equals(pkg)) {
                continue;
            }
            if (!index.containsKey(next)) {
                connect(next, uses, index, low, stack, onStack, found);
                low.put(pkg, Math.min(low.get(pkg), low.get(next)));
            }
            else if (onStack.contains(next)) {
                low.put(pkg, Math.min(low.get(pkg), index.get(next)));
            }
        }
        if (low.get(pkg).equals(index.get(pkg))) {
            Set<String> part = new TreeSet<>();
            String member;
            do {
                member = stack.pop();
                onStack.remove(member);
                part.add(member);
            } while (!member.equals(pkg));
            if (part.size() > 1) {
                found.add(part);
            }
        }
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
