package dev.tether.execution;

import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;

import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.ClassWriter;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.Opcodes;

/**
 * Lets GraalJS 23.1 (the last line that runs on Java 17) run on Java 22 and later. Its Truffle calls
 * {@code sun.misc.Unsafe.ensureClassInitialized(Class)} at exactly one place,
 * {@code LibraryFactory.ensureLibraryInitialized}, and Java 22 removed that method; every other Unsafe method it
 * uses still exists (checked against Java 25). Before the engine is first built, this defines
 * {@code LibraryFactory} itself, from Truffle's own bytes with that one call replaced by
 * {@code Class.forName(c.getName(), true, c.getClassLoader())}, which initializes the class the same way.
 * Remove it when the project moves to Java 21 and GraalJS 24 or later.
 */
final class TruffleOnNewerJdks {

    private static final String FACTORY = "com/oracle/truffle/api/library/LibraryFactory";
    /** A class of the same package whose loading does not load LibraryFactory: the anchor for defining it. */
    private static final String ANCHOR = "com.oracle.truffle.api.library.GenerateLibrary";

    private static boolean done;

    private TruffleOnNewerJdks() {
    }

    /** Defines the adapted LibraryFactory once, on Java 22 and later; before any GraalJS engine is built. */
    static synchronized void prepare() {
        if (done || Runtime.version().feature() < 22) {
            return;
        }
        done = true;
        try {
            Class<?> anchor = Class.forName(ANCHOR, false, TruffleOnNewerJdks.class.getClassLoader());
            byte[] original;
            try (InputStream in = anchor.getClassLoader().getResourceAsStream(FACTORY + ".class")) {
                if (in == null) {
                    throw new IllegalStateException(FACTORY + ".class not found beside " + ANCHOR);
                }
                original = in.readAllBytes();
            }
            MethodHandles.privateLookupIn(anchor, MethodHandles.lookup()).defineClass(adapt(original));
        }
        catch (ReflectiveOperationException | IOException | LinkageError | IllegalStateException ex) {
            // Left as it is, the engine then fails to build and every execution says so.
            org.slf4j.LoggerFactory.getLogger(TruffleOnNewerJdks.class)
                    .warn("could not adapt GraalJS 23.1 to Java {}: {}", Runtime.version().feature(), ex.toString());
        }
    }

    static byte[] adapt(byte[] original) {
        ClassReader reader = new ClassReader(original);
        // Not sharing the reader's constant pool, so the removed method is not even named any more.
        ClassWriter writer = new ClassWriter(ClassWriter.COMPUTE_MAXS);
        reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
            @Override
            public MethodVisitor visitMethod(int access, String name, String descriptor, String signature, String[] exceptions) {
                return new MethodVisitor(Opcodes.ASM9, super.visitMethod(access, name, descriptor, signature, exceptions)) {
                    @Override
                    public void visitMethodInsn(int opcode, String owner, String method, String desc, boolean isInterface) {
                        if (!owner.equals("sun/misc/Unsafe") || !method.equals("ensureClassInitialized")) {
                            super.visitMethodInsn(opcode, owner, method, desc, isInterface);
                            return;
                        }
                        // stack: unsafe, class  ->  Class.forName(class.getName(), true, class.getClassLoader())
                        super.visitInsn(Opcodes.SWAP);
                        super.visitInsn(Opcodes.POP);
                        super.visitInsn(Opcodes.DUP);
                        super.visitMethodInsn(Opcodes.INVOKEVIRTUAL, "java/lang/Class", "getName", "()Ljava/lang/String;", false);
                        super.visitInsn(Opcodes.SWAP);
                        super.visitInsn(Opcodes.ICONST_1);
                        super.visitInsn(Opcodes.SWAP);
                        super.visitMethodInsn(Opcodes.INVOKEVIRTUAL, "java/lang/Class", "getClassLoader", "()Ljava/lang/ClassLoader;", false);
                        super.visitMethodInsn(Opcodes.INVOKESTATIC, "java/lang/Class", "forName",
                                "(Ljava/lang/String;ZLjava/lang/ClassLoader;)Ljava/lang/Class;", false);
                        super.visitInsn(Opcodes.POP);
                    }
                };
            }
        }, 0);
        return writer.toByteArray();
    }
}
