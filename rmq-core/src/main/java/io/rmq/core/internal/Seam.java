package io.rmq.core.internal;

import java.lang.invoke.MethodHandles;

import org.jspecify.annotations.Nullable;

/**
 * How a public API class lets the rest of the engine construct it, or read its parts, without a public member that
 * takes or returns internal types (the JDK's "shared secrets"): the class registers a factory or accessor here in its
 * static initializer, and {@link #get} initializes the class before handing that out. No reflection, so nothing to
 * declare for a GraalVM native image: {@link MethodHandles.Lookup#ensureInitialized} is the JDK's own way to force
 * class initialization (its {@code SharedSecrets} use it too).
 * <p>
 * Thread-safe: the value is written once, during the owner's class initialization, which the JVM completes (with a
 * happens-before edge) before {@code ensureInitialized} returns in any other thread.
 *
 * @param <T> the factory or accessor interface
 */
public final class Seam<T> {

    private final Class<?> owner;
    private volatile @Nullable T value;

    /** @param owner the public class whose static initializer {@linkplain #register registers} the value */
    public Seam(Class<?> owner) {
        this.owner = owner;
    }

    /** Called once, from the owner's static initializer. */
    public void register(T value) {
        if (this.value != null) {
            throw new IllegalStateException("a second registration for " + owner.getName());
        }
        this.value = value;
    }

    /** The owner's registered value; initializes the owner first if need be. */
    public T get() {
        T registered = value;
        if (registered != null) {
            return registered;
        }
        try {
            MethodHandles.lookup().ensureInitialized(owner);
        }
        catch (IllegalAccessException ex) {
            throw new IllegalStateException(owner.getName() + " is not accessible to the engine", ex);
        }
        registered = value;
        if (registered == null) {
            throw new IllegalStateException(owner.getName() + " registered nothing when it was initialized");
        }
        return registered;
    }
}
