package dev.tether.arch;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/** Keeps the shape of ARCHITECTURE.md: feature packages without cycles, processes only in process/. */
class ArchitectureTest {

    private static final JavaClasses TETHER = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.tether");

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
                        "dev.tether.health..", "dev.tether.catalog..", "dev.tether.store..")
                .should().dependOnClassesThat().resideInAnyPackage("org.springframework.web..", "org.springframework.http..")
                .check(TETHER);
    }

    @Test
    void httpSourcesKnowNothingOfTheApiOrOfMcp() {
        noClasses().that().resideInAnyPackage("dev.tether.openapi..", "dev.tether.graphql..", "dev.tether.http..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.tether.api..", "dev.tether.execution..",
                        "dev.tether.mcp..", "dev.tether.session..", "dev.tether.process..", "dev.tether.docker..")
                .check(TETHER);
    }

    @Test
    void theOutboundHttpClientKnowsNoSource() {
        noClasses().that().resideInAPackage("dev.tether.http..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.tether.openapi..", "dev.tether.graphql..",
                        "dev.tether.calls..", "dev.tether.catalog..", "dev.tether.store..")
                .check(TETHER);
    }

    @Test
    void onlyDockerPackageTalksToTheDockerEngine() {
        noClasses().that().resideOutsideOfPackage("dev.tether.docker..")
                .should().dependOnClassesThat().resideInAnyPackage("io.netty.channel.unix..")
                .check(TETHER);
    }
}
