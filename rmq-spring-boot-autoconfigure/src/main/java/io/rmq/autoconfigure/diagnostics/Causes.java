package io.rmq.autoconfigure.diagnostics;

import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/** Finding the failure an analyzer is about in a start-up failure's chain of causes. */
final class Causes {

    private Causes() {
    }

    /** The outermost cause of that type that matches, or null. */
    static <T extends Throwable> @Nullable T find(@Nullable Throwable failure, Class<T> type,
            Predicate<? super T> matching) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t) && matching.test(type.cast(t))) {
                return type.cast(t);
            }
        }
        return null;
    }

    static <T extends Throwable> @Nullable T find(@Nullable Throwable failure, Class<T> type) {
        return find(failure, type, t -> true);
    }
}
