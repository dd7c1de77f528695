package dev.tether.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Answers recorded from a real Executor 1.5.9 daemon, kept in the test resources one JSON value per line. */
public final class ExecutorRecordings {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private ExecutorRecordings() {
    }

    /** The lines of the resource at this absolute path, parsed. */
    public static List<JsonNode> lines(String resource) {
        try (InputStream in = ExecutorRecordings.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("no recording at " + resource);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().filter(line -> !line.isBlank())
                    .map(JSON::readTree).toList();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
