package dev.tether.testsupport;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.InspectImageResponse;
import com.github.dockerjava.api.exception.NotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.images.builder.ImageFromDockerfile;
import org.testcontainers.images.builder.Transferable;

/**
 * Test images, built locally {@code FROM scratch} (nothing can be pulled here).
 *
 * <p>{@link #nodeImage()} holds the host's {@code node} binary with every shared library
 * {@code ldd} lists plus the dynamic loader, at the same absolute paths, the fixture at
 * {@code /app/fixture-mcp-server.js} and {@code src/test/node/node_modules} at
 * {@code /app/node_modules}. Its tag is a digest of those inputs ({@code tether-test-node:<digest>}): the image is built
 * only when they change, and worktrees or CI runs with other inputs on the same engine each get their own image, none
 * rebuilding or removing another's under its running tests. It is kept after the JVM exits and also tagged
 * {@value #NODE_IMAGE}, the latest built, so that {@code docker run -i --rm tether-test-node:latest node
 * /app/fixture-mcp-server.js} works from a shell and the benchmarks.
 */
public final class TestImages {

    private static final String REPOSITORY = "tether-test-node";
    public static final String NODE_IMAGE = REPOSITORY + ":latest";
    static final String INPUTS_LABEL = "dev.tether.test-image.inputs";

    private static String nodeImage;

    private TestImages() {
    }

    /** The tag of the node test image for this checkout's inputs, building it first if it is missing (once per JVM). */
    public static synchronized String nodeImage() {
        if (nodeImage == null) {
            nodeImage = buildNodeImage();
        }
        return nodeImage;
    }

    private static String buildNodeImage() {
        Path node = Fixture.nodeBinary();
        List<Path> libraries = sharedLibraries(node);
        Path fixture = Fixture.script();
        Path nodeModules = Fixture.nodeModules();

        // rootfs path inside the image -> host file (its content; symlinks followed)
        Map<String, Path> files = new LinkedHashMap<>();
        files.put(node.toString(), node);
        Path pathNode = Path.of("/usr/local/bin/node");
        if (!List.of("/usr/local/bin", "/usr/bin", "/bin").contains(node.getParent().toString())) {
            files.put(pathNode.toString(), node); // keep `node` on the image's PATH
        }
        libraries.forEach(lib -> files.put(lib.toString(), lib));
        files.put(Fixture.IMAGE_FIXTURE_SCRIPT, fixture);

        String digest = digest(files, nodeModules);
        String tag = REPOSITORY + ":" + digest.substring(0, 16);
        DockerClient docker = DockerClientFactory.instance().client();
        if (inspect(docker, tag).map(TestImages::inputsLabel).filter(digest::equals).isPresent()) {
            return tag;
        }

        String dockerfile = String.join("\n",
                "FROM scratch",
                "COPY rootfs/ /",
                "ENV PATH=/usr/local/bin:/usr/bin:/bin",
                "WORKDIR /app",
                "LABEL " + INPUTS_LABEL + "=\"" + digest + "\"",
                "");
        try {
            new ImageFromDockerfile(tag, false)
                    .withFileFromString("Dockerfile", dockerfile)
                    .withFileFromTransferable("rootfs", new RootFs(files, nodeModules))
                    .get(10, TimeUnit.MINUTES);
        } catch (Exception e) {
            throw new IllegalStateException("building " + tag + " failed", e);
        }
        String built = inspect(docker, tag).map(TestImages::inputsLabel).orElse(null);
        if (!digest.equals(built)) {
            throw new IllegalStateException("building " + tag + " left label " + built + ", expected " + digest);
        }
        docker.tagImageCmd(tag, REPOSITORY, "latest").exec();
        return tag;
    }

    /** Absolute paths {@code ldd} lists for {@code binary} (the loader included, vdso excluded). */
    static List<Path> sharedLibraries(Path binary) {
        String output;
        try {
            Process ldd = new ProcessBuilder("ldd", binary.toString()).redirectErrorStream(true).start();
            output = new String(ldd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!ldd.waitFor(30, TimeUnit.SECONDS) || ldd.exitValue() != 0) {
                throw new IllegalStateException("ldd " + binary + " failed: " + output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run ldd (needed to build " + NODE_IMAGE + ")", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        List<Path> libraries = new ArrayList<>();
        // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
        Pattern line = Pattern.compile("^\\s*(?:\\S+\\s+=>\\s+)?(/\\S+)\\s+\\(0x[0-9a-f]+\\)\\s*$");
        for (String l : output.split("\n")) {
            if (l.contains("not found")) {
                throw new IllegalStateException("ldd " + binary + ": " + l.trim());
            }
            Matcher m = line.matcher(l);
            if (m.matches()) {
                libraries.add(Path.of(m.group(1)));
            }
        }
        if (libraries.isEmpty()) {
            throw new IllegalStateException("ldd listed no library for " + binary + ": " + output);
        }
        return libraries;
    }

    private static String inputsLabel(InspectImageResponse image) {
        Map<String, String> labels = image.getConfig() == null ? null : image.getConfig().getLabels();
        return labels == null ? null : labels.get(INPUTS_LABEL);
    }

    private static Optional<InspectImageResponse> inspect(DockerClient docker, String image) {
        try {
            return Optional.of(docker.inspectImageCmd(image).exec());
        } catch (NotFoundException e) {
            return Optional.empty();
        }
    }

    /** Digest of what goes into the image: paths, sizes and times of binaries, content of the rest. */
    private static String digest(Map<String, Path> files, Path nodeModules) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            for (Map.Entry<String, Path> f : files.entrySet()) {
                Path real = f.getValue().toRealPath();
                sha.update((f.getKey() + "|" + real + "|" + Files.size(real) + "|"
                        + Files.getLastModifiedTime(real).toMillis() + "\n").getBytes(StandardCharsets.UTF_8));
            }
            sha.update(Files.readAllBytes(files.get(Fixture.IMAGE_FIXTURE_SCRIPT)));
            for (String lock : List.of(".package-lock.json", "../package-lock.json")) {
                Path p = nodeModules.resolve(lock);
                if (Files.isRegularFile(p)) {
                    sha.update(Files.readAllBytes(p));
                }
            }
            return HexFormat.of().formatHex(sha.digest()).substring(0, 32);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The {@code rootfs/} directory of the build context, written straight into the context tar:
     * single files at their image paths (content of the host file, symlinks followed) and the
     * node_modules tree at /app/node_modules with its symlinks kept as symlinks.
     */
    private static final class RootFs implements Transferable {
        private final Map<String, Path> files;
        private final Path nodeModules;

        RootFs(Map<String, Path> files, Path nodeModules) {
            this.files = files;
            this.nodeModules = nodeModules;
        }

        @Override
        public long getSize() {
            long size = 0;
            for (Path p : files.values()) {
                size += p.toFile().length();
            }
            return size;
        }

        @Override
        public int getFileMode() {
            return DEFAULT_DIR_MODE;
        }

        @Override
        public String getDescription() {
            return "rootfs of " + NODE_IMAGE;
        }

        @Override
        public void transferTo(TarArchiveOutputStream tar, String destination) {
            try {
                TreeSet<String> dirs = new TreeSet<>();
                for (String imagePath : files.keySet()) {
                    for (Path d = Path.of(imagePath).getParent(); d != null && d.getNameCount() > 0; d = d.getParent()) {
                        dirs.add(d.toString());
                    }
                }
                dirs.add("/app");
                directory(tar, destination, 0755);
                for (String dir : dirs) {
                    directory(tar, destination + dir, 0755);
                }
                directory(tar, destination + "/tmp", 01777);
                for (Map.Entry<String, Path> f : files.entrySet()) {
                    file(tar, destination + f.getKey(), f.getValue());
                }
                try (Stream<Path> tree = Files.walk(nodeModules)) {
                    for (Path p : (Iterable<Path>) tree::iterator) {
                        String name = destination + "/app/node_modules/" + nodeModules.relativize(p);
                        if (Files.isSymbolicLink(p)) {
                            TarArchiveEntry link = new TarArchiveEntry(name, TarConstants.LF_SYMLINK);
                            link.setLinkName(Files.readSymbolicLink(p).toString());
                            tar.putArchiveEntry(link);
                            tar.closeArchiveEntry();
                        } else if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                            directory(tar, name, 0755);
                        } else {
                            file(tar, name, p);
                        }
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        private static void directory(TarArchiveOutputStream tar, String name, int mode) throws IOException {
            TarArchiveEntry entry = new TarArchiveEntry(name.endsWith("/") ? name : name + "/");
            entry.setMode(TarArchiveEntry.DEFAULT_DIR_MODE & ~07777 | mode);
            tar.putArchiveEntry(entry);
            tar.closeArchiveEntry();
        }

        private static void file(TarArchiveOutputStream tar, String name, Path source) throws IOException {
            Path real = source.toRealPath();
            TarArchiveEntry entry = new TarArchiveEntry(name);
            entry.setSize(Files.size(real));
            entry.setMode(TarArchiveEntry.DEFAULT_FILE_MODE & ~07777 | (int) Files.getAttribute(real, "unix:mode") & 07777);
            tar.putArchiveEntry(entry);
            Files.copy(real, tar);
            tar.closeArchiveEntry();
        }
    }
}
