package io.rmq.test.context;

import org.jspecify.annotations.NullMarked;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** rmq-test's API is {@link NullMarked} (JSpecify), as rmq-core's and the Spring layer's are. */
class NullMarkedTest {

    @Test
    void thePackageIsNullMarked() {
        assertThat(RmqTest.class.getPackage().isAnnotationPresent(NullMarked.class)).isTrue();
    }
}
