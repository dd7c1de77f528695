package dev.tether.docker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.tether.daemon.TetherProperties;
import dev.tether.process.ChildSpec;

/**
 * The rewrite that makes a {@code docker run} child findable: name, labels and {@code --init} go right after
 * {@code run}, and everything the user wrote (global options, run flags, image, the server's own arguments)
 * stays exactly as given.
 */
class DockerRunRewriterTest {

    private static final String ID = "c0ffee123456";

    @TempDir
    Path dataDir;

    @Test
    void addsNameLabelsAndInitRightAfterRun() {
        ChildSpec rewritten = rewrite("docker", "run", "-i", "--rm", "mcp/everything");
        String name = "tether-" + instance() + "-" + ID;
        assertEquals(List.of("docker", "run", "--name", name,
                "--label", "tether.instance=" + instance(), "--label", "tether.session=" + ID, "--init",
                "-i", "--rm", "mcp/everything"), rewritten.argv());
        assertEquals(Optional.of(name), rewritten.containerName());
    }

    @Test
    void aFencedChildIsNamedAndLabelledAfterItsFenceSoThatOneEngineRunsOneContainerOfIt() {
        ChildSpec fenced = rewriter().rewrite(ChildSpec.of(ID, List.of("docker", "run", "-i", "--rm", "image"))
                .withFence(Optional.of("c1a2b3")));
        assertEquals(List.of("docker", "run", "--name", "tether-c1a2b3", "--label", "tether.instance=" + instance(),
                "--label", "tether.session=" + ID, "--label", "tether.connection=c1a2b3", "--init", "-i", "--rm", "image"),
                fenced.argv());
        assertEquals(Optional.of("tether-c1a2b3"), fenced.containerName());

        ChildSpec named = rewriter().rewrite(ChildSpec.of(ID, List.of("docker", "run", "--name", "mine", "image"))
                .withFence(Optional.of("c1a2b3")));
        assertEquals(Optional.of("mine"), named.containerName(), "the user's name is kept, and is as unique");
        assertEquals(List.of("--label", "tether.connection=c1a2b3", "--init", "--name", "mine", "image"), tail(named, 6));
    }

    @Test
    void keepsUserFlagsImageAndServerArgumentsExactly() {
        List<String> user = List.of("-i", "--rm", "-e", "TOKEN", "--env=MODE=fast", "-v", "/data:/data:ro",
                "--network", "host", "-it", "--workdir=/app", "ghcr.io/acme/server:1.2", "serve", "--port", "0", "-v");
        ChildSpec rewritten = rewrite(concat(List.of("docker", "run"), user));
        List<String> argv = rewritten.argv();
        assertEquals(user, argv.subList(argv.size() - user.size(), argv.size()));
        assertEquals(List.of("docker", "run", "--name"), argv.subList(0, 3));
        assertEquals(2 + 7 + user.size(), argv.size(), "name, two labels and --init added, nothing else");
    }

    @Test
    void understandsDockerContainerRun() {
        ChildSpec rewritten = rewrite("docker", "container", "run", "-i", "image");
        assertEquals(List.of("docker", "container", "run", "--name"), rewritten.argv().subList(0, 4));
        assertEquals(List.of("-i", "image"), tail(rewritten, 2));
    }

    @Test
    void skipsGlobalOptionsBeforeTheCommand() {
        ChildSpec rewritten = rewrite("/usr/bin/docker", "--context", "x", "-H", "unix:///run/docker.sock",
                "--log-level=warn", "--debug", "run", "-i", "image", "arg");
        assertEquals(List.of("/usr/bin/docker", "--context", "x", "-H", "unix:///run/docker.sock", "--log-level=warn",
                "--debug", "run", "--name"), rewritten.argv().subList(0, 9));
        assertEquals(List.of("--init", "-i", "image", "arg"), tail(rewritten, 4));
    }

    @Test
    void respectsTheUserInit() {
        ChildSpec rewritten = rewrite("docker", "run", "-i", "--init", "image");
        assertEquals(1, rewritten.argv().stream().filter("--init"::equals).count());
        ChildSpec withValue = rewrite("docker", "run", "-i", "--init=false", "image");
        assertEquals(0, withValue.argv().stream().filter("--init"::equals).count(), "--init=false is the user's call");
    }

    @Test
    void respectsTheUserName() {
        ChildSpec spaced = rewrite("docker", "run", "-i", "--name", "mine", "image");
        assertEquals(Optional.of("mine"), spaced.containerName());
        assertEquals(1, spaced.argv().stream().filter("--name"::equals).count());
        assertEquals(List.of("docker", "run", "--label", "tether.instance=" + instance(), "--label",
                "tether.session=" + ID, "--init", "-i", "--name", "mine", "image"), spaced.argv());

        ChildSpec joined = rewrite("docker", "run", "-i", "--name=mine", "image");
        assertEquals(Optional.of("mine"), joined.containerName());
        assertEquals(0, joined.argv().stream().filter("--name"::equals).count());
    }

    @Test
    void serverArgumentNamedLikeADockerFlagIsNotMistakenForOne() {
        ChildSpec rewritten = rewrite("docker", "run", "-i", "--rm", "image", "node", "server.js", "--name", "x", "--init");
        String name = "tether-" + instance() + "-" + ID;
        assertEquals(Optional.of(name), rewritten.containerName(), "the server's --name is its own");
        assertEquals(List.of("--init", "-i", "--rm", "image", "node", "server.js", "--name", "x", "--init"),
                tail(rewritten, 9));
    }

    @Test
    void shortOptionWithItsValueAttachedDoesNotSwallowTheImage() {
        // -eTOKEN passes TOKEN through, -p8080:80 publishes: neither takes the next argument.
        ChildSpec rewritten = rewrite("docker", "run", "-i", "-eTOKEN", "image", "--name", "server-arg");
        assertEquals(Optional.of("tether-" + instance() + "-" + ID), rewritten.containerName(),
                "the image is not -e's value, so --name after it is the server's");
        ChildSpec published = rewrite("docker", "run", "-i", "-p8080:80", "image", "--init");
        assertEquals(List.of("--init", "-i", "-p8080:80", "image", "--init"), tail(published, 5),
                "the server's --init does not stand for the user's");
        ChildSpec clustered = rewrite("docker", "run", "-ie", "TOKEN", "image", "--name", "server-arg");
        assertEquals(Optional.of("tether-" + instance() + "-" + ID), clustered.containerName(),
                "in -ie the e takes the next argument");
    }

    @ParameterizedTest
    @ValueSource(strings = { "node server.js --name docker", "npx -y @modelcontextprotocol/server-everything",
            "docker ps", "docker --context x ps", "docker container ls", "dockerd run", "/opt/docker-wrapper run image",
            "docker" })
    void leavesOtherCommandsAlone(String command) {
        ChildSpec spec = ChildSpec.of(ID, List.of(command.split(" ")));
        assertSame(spec, rewriter().rewrite(spec));
    }

    @Test
    void keepsEnvironmentAndWorkingDirectory() {
        ChildSpec spec = ChildSpec.of(ID, List.of("docker", "run", "-i", "image"))
                .withEnv(Map.of("TOKEN", "secret"))
                .withCwd(dataDir);
        ChildSpec rewritten = rewriter().rewrite(spec);
        assertEquals(Map.of("TOKEN", "secret"), rewritten.env());
        assertEquals(Optional.of(dataDir), rewritten.cwd());
        assertEquals(ID, rewritten.id());
    }

    private ChildSpec rewrite(String... argv) {
        return rewrite(List.of(argv));
    }

    private ChildSpec rewrite(List<String> argv) {
        return rewriter().rewrite(ChildSpec.of(ID, argv));
    }

    private DockerRunRewriter rewriter() {
        return new DockerRunRewriter(new InstanceId(new TetherProperties(dataDir)));
    }

    private String instance() {
        return new InstanceId(new TetherProperties(dataDir)).value();
    }

    private static List<String> tail(ChildSpec spec, int n) {
        List<String> argv = spec.argv();
        return argv.subList(argv.size() - n, argv.size());
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}
