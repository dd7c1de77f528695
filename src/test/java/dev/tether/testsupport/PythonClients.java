package dev.tether.testsupport;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The real Python clients of {@code src/test/python} (the official Python MCP SDK, pinned in its
 * {@code requirements.txt}), run as child processes of the test with the interpreter of the checkout's
 * {@code .venv-test} ({@code .ci/run} makes it). Their runs are {@link NodeClients.Run}s: stdout line by line, bounded
 * waits, killed on close.
 */
public final class PythonClients {

    private PythonClients() {
    }

    /** {@code src/test/python}. */
    public static Path directory() {
        return Fixture.projectRoot().resolve("src/test/python");
    }

    private static Path python() {
        return Fixture.projectRoot().resolve(".venv-test/bin/python");
    }

    /** What is missing to run the clients, or empty when nothing is. */
    static Optional<String> missing() {
        if (!Files.isExecutable(python())) {
            return Optional.of(python() + " is missing (python3 -m venv .venv-test && .venv-test/bin/pip install -r "
                    + "src/test/python/requirements.txt)");
        }
        try (DirectoryStream<Path> sitePackages = Files.newDirectoryStream(Fixture.projectRoot().resolve(".venv-test/lib"),
                "python3*")) {
            for (Path lib : sitePackages) {
                if (Files.isDirectory(lib.resolve("site-packages/mcp/client"))) {
                    return Optional.empty();
                }
            }
        } catch (IOException unreadable) {
            return Optional.of(".venv-test/lib is unreadable: " + unreadable.getMessage());
        }
        return Optional.of(".venv-test lacks the mcp package (.venv-test/bin/pip install -r src/test/python/requirements.txt)");
    }

    /** Runs {@code python <script in src/test/python> args...} there, with a {@code HOME} of its own. */
    public static NodeClients.Run run(String script, List<String> args) {
        List<String> command = new ArrayList<>(List.of(python().toString(), directory().resolve(script).toString()));
        command.addAll(args);
        try {
            Path stderr = Files.createTempFile("python-client-", ".stderr");
            ProcessBuilder builder = new ProcessBuilder(command)
                    .directory(directory().toFile())
                    .redirectError(stderr.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            builder.environment().put("HOME", Files.createTempDirectory("python-client-home-").toString());
            return new NodeClients.Run(command, builder.start(), stderr);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
