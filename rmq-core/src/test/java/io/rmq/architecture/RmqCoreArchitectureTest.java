package io.rmq.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.PackageMatchers;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.EvaluationResult;

import io.rmq.Rmq;
import io.rmq.architecture.fixture.high.High;
import io.rmq.architecture.fixture.internal.Hidden;
import io.rmq.architecture.fixture.low.Low;

/**
 * rmq-core's architecture: the layering of its packages, no Spring, and a public API that does not expose internal
 * types. Each rule is also run on a deliberately bad sample to show that it can fail.
 */
class RmqCoreArchitectureTest {

    /**
     * rmq-core's packages bottom-up. consumer and observe share a layer: {@code RmqInstrumentation} hands out
     * {@code Delivery}, and the consumer calls the instrumentation (see {@link #packagesAreFreeOfCyclesButOne}).
     * coordination and micrometer are optional add-ons; micrometer sits on top because it binds to the facade.
     */
    static final List<List<String>> LAYERS = List.of(
            List.of("io.rmq.core.."),
            List.of("io.rmq.redis.."),
            List.of("io.rmq.coordination.."),
            List.of("io.rmq.consumer..", "io.rmq.observe.."),
            List.of("io.rmq.producer.."),
            List.of("io.rmq.reply.."),
            List.of("io.rmq.admin.."),
            List.of("io.rmq.container.."),
            List.of("io.rmq.instances.."),
            List.of("io.rmq", "io.rmq.internal.."),
            List.of("io.rmq.micrometer.."));

    private static final JavaClasses CORE = ArchitectureRules.productionClassesOf(Rmq.class);

    private static final JavaClasses BAD_SAMPLE = new ClassFileImporter()
            .importClasses(Low.class, High.class, Hidden.class);

    @Test
    void importsTheWholeEngine() {
        assertThat(CORE.stream().map(JavaClass::getPackageName).distinct())
                .contains("io.rmq", "io.rmq.core", "io.rmq.redis", "io.rmq.consumer", "io.rmq.container",
                        "io.rmq.micrometer")
                .noneMatch(p -> p.startsWith("io.rmq.architecture") || p.startsWith("io.rmq.test"));
    }

    @Test
    void everyPackageBelongsToALayer() {
        Set<String> unassigned = CORE.stream().map(JavaClass::getPackageName).distinct()
                .filter(p -> LAYERS.stream().flatMap(List::stream)
                        .noneMatch(layer -> PackageMatchers.of(layer).test(p)))
                .collect(Collectors.toSet());
        assertThat(unassigned).as("packages in no layer of LAYERS").isEmpty();
    }

    @Test
    void noPackageDependsOnALayerAboveIt() {
        ArchitectureRules.layering(LAYERS).check(CORE);
    }

    @Test
    void layeringRuleFailsWhenALowerLayerReachesUp() {
        EvaluationResult result = ArchitectureRules.layering(List.of(
                List.of("io.rmq.architecture.fixture.low.."), List.of("io.rmq.architecture.fixture.high..")))
                .evaluate(BAD_SAMPLE);
        assertThat(result.hasViolation()).isTrue();
        assertThat(result.getFailureReport().getDetails())
                .anyMatch(d -> d.contains(Low.class.getName()) && d.contains(High.class.getName()));
    }

    @Test
    void packagesAreFreeOfCyclesButOne() {
        // The one cycle of today, left for later: observe's RmqInstrumentation takes consumer's Delivery.
        ArchitectureRules.noCyclesBetweenPackagesOf("io.rmq")
                .ignoreDependency(JavaClass.Predicates.resideInAPackage("io.rmq.observe.."),
                        JavaClass.Predicates.resideInAPackage("io.rmq.consumer.."))
                .check(CORE);
        EvaluationResult withIt = ArchitectureRules.noCyclesBetweenPackagesOf("io.rmq").evaluate(CORE);
        assertThat(withIt.getFailureReport().getDetails())
                .anyMatch(d -> d.contains("consumer") && d.contains("observe"));
    }

    @Test
    void cycleRuleFailsOnACycle() {
        assertThat(ArchitectureRules.noCyclesBetweenPackagesOf("io.rmq.architecture.fixture").evaluate(BAD_SAMPLE)
                .hasViolation()).isTrue();
    }

    @Test
    void engineDoesNotReferenceSpring() {
        // The rule failing on classes that do use Spring is shown in the Spring layer's architecture test.
        ArchitectureRules.noDependencyOn("org.springframework..").check(CORE);
    }

    /**
     * No public type outside the internal packages extends or implements an internal type, and none of its public or
     * protected members mentions one in its signature: the API packages hold interfaces and values, the implementations
     * live in the internal packages, and {@code Rmq} builds them.
     */
    @Test
    void publicApiExposesNoInternalType() {
        assertThat(ArchitectureRules.internalTypesInApiSignatures(CORE)).isEmpty();
    }

    @Test
    void apiRuleFindsInternalTypesInEverySignaturePosition() {
        assertThat(ArchitectureRules.internalTypesInApiSignatures(BAD_SAMPLE)).containsExactly(
                High.class.getName() + "#exposed -> " + Hidden.class.getName(),
                High.class.getName() + "#hidden -> " + Hidden.class.getName());
    }

    /**
     * No top-level class of rmq-core is in an import cycle with another, except the one listed here: a new cycle, a
     * listed one that grew or one that is gone (take it off the list) fails.
     */
    static final List<String> CLASS_CYCLES_LEFT = List.of(
            // the composition root stays a class, and RmqInternals is the one door it opens to RMQ's Spring layer and
            // tests (its private parts, through a seam that Rmq registers)
            "io.rmq.Rmq <-> io.rmq.internal.RmqInternals");

    @Test
    void classesAreFreeOfImportCyclesButTheListedOnes() {
        assertThat(ArchitectureRules.classCycles(CORE)).containsExactlyInAnyOrderElementsOf(CLASS_CYCLES_LEFT);
    }

    @Test
    void classCycleRuleFindsACycle() {
        assertThat(ArchitectureRules.classCycles(BAD_SAMPLE))
                .containsExactly(High.class.getName() + " <-> " + Low.class.getName());
    }

    /** docs/engine.md's list of the public API, "- `package`: `Type`, `Type`" per package (continued lines joined). */
    static java.util.Map<String, Set<String>> documentedApi() throws java.io.IOException {
        String doc = java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "engine.md"));
        String section = doc.substring(doc.indexOf("## The public API"));
        int next = section.indexOf("\n## ", 1);
        section = (next < 0 ? section : section.substring(0, next)).replace("\n  ", " ");
        java.util.Map<String, Set<String>> api = new java.util.TreeMap<>();
        java.util.regex.Matcher line = java.util.regex.Pattern.compile("(?m)^- `([a-z.]+)`: (.*)$").matcher(section);
        while (line.find()) {
            Set<String> types = new java.util.TreeSet<>();
            java.util.regex.Matcher type = java.util.regex.Pattern.compile("`(\\w+)`").matcher(line.group(2));
            while (type.find()) {
                types.add(type.group(1));
            }
            api.put(line.group(1), types);
        }
        return api;
    }

    @Test
    void theDocumentedApiIsWhatIsPublicOutsideTheInternalPackages() throws Exception {
        java.util.Map<String, Set<String>> actual = new java.util.TreeMap<>();
        CORE.stream().filter(c -> c.getEnclosingClass().isEmpty() && !c.isAnonymousClass()
                        && c.getModifiers().contains(com.tngtech.archunit.core.domain.JavaModifier.PUBLIC)
                        && !ArchitectureRules.isInternal(c.getPackageName()))
                .forEach(c -> actual.computeIfAbsent(c.getPackageName(), p -> new java.util.TreeSet<>())
                        .add(c.getSimpleName()));
        assertThat(documentedApi()).as("docs/engine.md's public API list").isEqualTo(actual);
    }
}
