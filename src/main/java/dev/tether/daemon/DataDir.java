package dev.tether.daemon;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * Tether's data dir holds its token, instance id, child ledger, store and store key: only its owner may enter it.
 * Directories Tether creates there are {@code 0700} and files {@code 0600}, and at start (before the store opens)
 * and again after it has opened, everything already inside is brought to those modes, so an install made by an
 * older Tether is tightened too. On a file system without POSIX modes (Windows) the modes are left to the OS.
 */
public final class DataDir {

    private static final Set<PosixFilePermission> DIRECTORY = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");

    private DataDir() {
    }

    /**
     * Makes {@code dir} a usable, owner-only data dir: created if missing, found to be a writable directory, its
     * contents tightened.
     *
     * @throws StartupFailure naming the path and the reason when it cannot be used
     */
    public static void prepare(Path dir) {
        Path absolute = dir.toAbsolutePath().normalize();
        try {
            createDirectories(absolute);
            if (!Files.isDirectory(absolute)) {
                throw unusable(absolute, "it is not a directory");
            }
            probeWrite(absolute);
            restrict(absolute);
        }
        catch (FileAlreadyExistsException | NotDirectoryException ex) {
            throw unusable(absolute, (ex.getFile() == null ? "a part of it" : ex.getFile()) + " is not a directory");
        }
        catch (AccessDeniedException ex) {
            throw unusable(absolute, "permission denied on " + ex.getFile());
        }
        catch (FileSystemException ex) {
            String reason = ex.getReason() == null ? ex.getClass().getSimpleName() : ex.getReason();
            throw unusable(absolute, reason + (ex.getFile() == null ? "" : " (" + ex.getFile() + ")"));
        }
        catch (IOException | UncheckedIOException | SecurityException ex) {
            throw unusable(absolute, String.valueOf(ex.getMessage()));
        }
    }

    /** Whether a file can be created in {@code dir}: mode bits say nothing to root, a read-only mount or chattr does. */
    private static void probeWrite(Path dir) {
        try {
            Files.delete(Files.createTempFile(dir, ".write-probe", null, fileAttributes(dir)));
        }
        catch (FileSystemException ex) {
            throw unusable(dir, "cannot create a file in it: " + (ex.getReason() == null ? ex.getClass().getSimpleName() : ex.getReason()));
        }
        catch (IOException ex) {
            throw unusable(dir, "cannot create a file in it: " + ex.getMessage());
        }
    }

    /** Creates {@code dir} and any missing parents owner-only (the parents of a data dir are not ours to change). */
    public static Path createDirectories(Path dir) throws IOException {
        if (Files.isDirectory(dir)) {
            return dir;
        }
        Path parent = dir.toAbsolutePath().getParent();
        if (parent != null) {
            createDirectories(parent);
        }
        try {
            Files.createDirectory(dir, directoryAttributes(parent));
        }
        catch (FileAlreadyExistsException ex) {
            if (!Files.isDirectory(dir)) {
                throw ex;
            }
        }
        return dir;
    }

    /** Writes {@code content} to {@code file} atomically, in a file only the owner can read. */
    public static void writeOwnerOnly(Path file, String content) throws IOException {
        Path parent = Objects.requireNonNull(file.toAbsolutePath().getParent(), "a file's parent");
        createDirectories(parent);
        Path next = Files.createTempFile(parent, file.getFileName() + ".", ".next", fileAttributes(parent));
        try {
            Files.writeString(next, content);
            Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }
        finally {
            Files.deleteIfExists(next);
        }
    }

    /**
     * Brings every directory under {@code dir} to {@code 0700} and every file to {@code 0600}. H2 creates its files
     * with the process umask (usually {@code 0644}) and offers no mode of its own: the {@code 0700} directories are
     * what keeps other users out of files it creates later (trace, temp), and this call, made again once the store
     * has opened, fixes the modes of the files themselves.
     */
    public static void restrict(Path dir) throws IOException {
        if (!posix(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.toList()) {
                if (Files.isSymbolicLink(path)) {
                    continue;
                }
                Set<PosixFilePermission> wanted = Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS) ? DIRECTORY : FILE;
                try {
                    if (!Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS).equals(wanted)) {
                        Files.setPosixFilePermissions(path, wanted);
                    }
                }
                catch (java.nio.file.NoSuchFileException gone) {
                    // A temp file that went away while we walked: nothing to protect.
                }
            }
        }
    }

    private static FileAttribute<?>[] directoryAttributes(@Nullable Path near) {
        return near != null && posix(near) ? new FileAttribute<?>[] { PosixFilePermissions.asFileAttribute(DIRECTORY) }
                : new FileAttribute<?>[0];
    }

    private static FileAttribute<?>[] fileAttributes(Path near) {
        return posix(near) ? new FileAttribute<?>[] { PosixFilePermissions.asFileAttribute(FILE) } : new FileAttribute<?>[0];
    }

    private static boolean posix(Path near) {
        return near.getFileSystem().supportedFileAttributeViews().contains("posix");
    }

    private static StartupFailure unusable(Path dir, String reason) {
        return new StartupFailure("data dir " + dir + " is unusable: " + reason
                + " (set tether.data-dir or TETHER_DATA_DIR to a writable directory)");
    }
}
