package io.rmq.core.internal;

import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A seam hands out what its owner registered when it was initialized, initializing the owner itself. The seams live
 * here, not in their owners, so that reading one does not initialize its owner (as with the engine's factories).
 */
class SeamTest {

    static final Seam<Supplier<String>> REGISTERING = new Seam<>(Registering.class);
    static final Seam<Supplier<String>> SILENT = new Seam<>(Silent.class);
    static final Seam<Supplier<String>> TWICE = new Seam<>(RegistersTwice.class);

    static final class Registering {
        static {
            REGISTERING.register(() -> "made by " + Registering.class.getSimpleName());
        }
    }

    static final class Silent {
    }

    static final class RegistersTwice {
        static {
            TWICE.register(() -> "first");
            TWICE.register(() -> "second");
        }
    }

    @Test
    void getInitializesTheOwnerWhichRegistersItsFactory() {
        assertThat(REGISTERING.get().get()).isEqualTo("made by Registering");
        assertThat(REGISTERING.get()).isSameAs(REGISTERING.get());
    }

    @Test
    void anOwnerThatRegistersNothingFailsNamingIt() {
        assertThatThrownBy(SILENT::get).isInstanceOf(IllegalStateException.class)
                .hasMessage(Silent.class.getName() + " registered nothing when it was initialized");
    }

    @Test
    void aSecondRegistrationFailsTheOwnersInitialization() {
        assertThatThrownBy(TWICE::get).isInstanceOf(ExceptionInInitializerError.class)
                .cause().isInstanceOf(IllegalStateException.class)
                .hasMessage("a second registration for " + RegistersTwice.class.getName());
    }
}
