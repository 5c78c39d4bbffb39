package io.rmq.spring;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.jspecify.annotations.NullMarked;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every package of rmq-core and of this module is {@link NullMarked} (JSpecify, as Spring Framework 7): what is not
 * annotated {@code @Nullable} is non-null. A new package without a {@code package-info.java} fails here.
 */
class NullMarkedPackagesTest {

    @Test
    void everyPackageOfRmqCoreAndTheSpringLayerIsNullMarked() throws Exception {
        List<String> packages = new java.util.ArrayList<>();
        packages.addAll(packagesUnder(Path.of("../rmq-core/src/main/java")));
        packages.addAll(packagesUnder(Path.of("src/main/java")));
        assertThat(packages).contains("io.rmq", "io.rmq.core", "io.rmq.spring", "io.rmq.spring.listener");
        for (String name : packages) {
            Class<?> info = Class.forName(name + ".package-info");
            assertThat(info.isAnnotationPresent(NullMarked.class)).as(name).isTrue();
        }
    }

    /** The packages that have Java sources below {@code root}. */
    static List<String> packagesUnder(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(f -> f.toString().endsWith(".java")).map(Path::getParent).distinct()
                    .map(dir -> root.relativize(dir).toString().replace(java.io.File.separatorChar, '.')).sorted()
                    .toList();
        }
    }
}
