package io.rmq.spring.aot;

import java.time.Instant;

import io.rmq.spring.annotation.RmqScheduled;
import org.junit.jupiter.api.Test;

import org.springframework.aot.AotDetector;
import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.javapoet.ClassName;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @RmqScheduled} methods are called by reflection: Spring's AOT processing of a context registers each for
 * invocation (the annotation is {@code @Reflective}), whatever its visibility and parameter; other methods of the bean
 * are not registered. No native image is built here.
 */
class RmqScheduledHintsTest {

    static class Jobs {

        @RmqScheduled(name = "report", cron = "0 0 2 * * *")
        void report(Instant firing) {
        }

        @RmqScheduled(fixedRate = "30s")
        private void cleanUp() {
        }

        @RmqScheduled(name = "sync", fixedRate = "1m", misfire = "skip")
        public void sync() {
        }

        void notScheduled() {
        }
    }

    @Test
    void aotProcessingOfAContextRegistersItsScheduledMethodsForInvocation() {
        assertThat(AotDetector.useGeneratedArtifacts()).isFalse();
        RuntimeHints generated;
        try (GenericApplicationContext context = new GenericApplicationContext()) {
            context.registerBean("jobs", Jobs.class);
            DefaultGenerationContext generation = new DefaultGenerationContext(
                    new ClassNameGenerator(ClassName.get(getClass())), new InMemoryGeneratedFiles());
            new ApplicationContextAotGenerator().processAheadOfTime(context, generation);
            generated = generation.getRuntimeHints();
        }
        for (String method : new String[] {"report", "cleanUp", "sync"}) {
            assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Jobs.class, method)).as(method)
                    .accepts(generated);
        }
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Jobs.class, "notScheduled"))
                .rejects(generated);
    }
}
