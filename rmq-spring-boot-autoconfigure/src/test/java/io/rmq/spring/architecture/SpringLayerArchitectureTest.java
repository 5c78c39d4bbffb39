package io.rmq.spring.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;


import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.lang.EvaluationResult;
import com.tngtech.archunit.lang.syntax.ArchRuleDefinition;

import io.rmq.architecture.ArchitectureRules;
import io.rmq.autoconfigure.RmqAutoConfiguration;
import io.rmq.spring.RmqTemplate;

/**
 * The Spring layer's public API (io.rmq.spring.., io.rmq.autoconfigure..) exposes no internal type of rmq-core; and
 * the rule that keeps Spring out of rmq-core does catch Spring where it is used.
 */
class SpringLayerArchitectureTest {

    private static final JavaClasses SPRING_LAYER = ArchitectureRules.productionClassesOf(RmqTemplate.class);

    @Test
    void importsTheSpringLayerAndItsUseOfTheEngine() {
        assertThat(SPRING_LAYER.contain(RmqTemplate.class)).isTrue();
        assertThat(SPRING_LAYER.contain(RmqAutoConfiguration.class)).isTrue();
        assertThat(SPRING_LAYER.stream().flatMap(c -> c.getDirectDependenciesFromSelf().stream())
                .map(d -> d.getTargetClass().getPackageName()))
                .as("the Spring layer's dependencies on rmq-core internals, which its API must not expose")
                .anyMatch(ArchitectureRules::isInternal);
    }

    @Test
    void publicApiExposesNoInternalTypeOfTheEngine() {
        assertThat(ArchitectureRules.internalTypesInApiSignatures(SPRING_LAYER)).isEmpty();
    }

    /** Messages are named by {@link io.rmq.admin.MessageRef}; how one is stored is rmq-core's business. */
    @Test
    void theSpringLayerBuildsNoStorageMembers() {
        ArchRuleDefinition.noClasses().should().dependOnClassesThat()
                .haveFullyQualifiedName("io.rmq.redis.internal.EnvelopeKeys").check(SPRING_LAYER);
    }

    @Test
    void noSpringRuleFindsSpringInTheSpringLayer() {
        EvaluationResult result = ArchitectureRules.noDependencyOn("org.springframework..").evaluate(SPRING_LAYER);
        assertThat(result.getFailureReport().getDetails())
                .anyMatch(d -> d.contains(RmqAutoConfiguration.class.getName()) && d.contains("org.springframework"));
    }

}
