package io.rmq.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;
import com.tngtech.archunit.library.dependencies.SliceRule;
import com.tngtech.archunit.library.dependencies.SlicesRuleDefinition;

/**
 * The architecture rules of RMQ, shared by rmq-core's and the Spring layer's architecture tests. Each rule is a
 * function of its inputs (layers, packages) so that a test can show it failing on a deliberately bad class set.
 */
public final class ArchitectureRules {

    private ArchitectureRules() {
    }

    /** The production classes of the module (jar or directory) that holds {@code anyClass}, tests excluded. */
    public static JavaClasses productionClassesOf(Class<?> anyClass) {
        try {
            Path location = Path.of(anyClass.getProtectionDomain().getCodeSource().getLocation().toURI());
            return new ClassFileImporter().importPath(location);
        } catch (URISyntaxException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /**
     * Layers bottom-up, each a list of ArchUnit package patterns: no class of a layer may depend on a class of a
     * layer above it.
     */
    public static ArchRule layering(List<List<String>> bottomUp) {
        List<ArchRule> rules = new ArrayList<>();
        for (int i = 0; i < bottomUp.size() - 1; i++) {
            String[] layer = bottomUp.get(i).toArray(String[]::new);
            String[] above = bottomUp.subList(i + 1, bottomUp.size()).stream().flatMap(List::stream)
                    .toArray(String[]::new);
            rules.add(noClasses().that().resideInAnyPackage(layer)
                    .should().dependOnClassesThat().resideInAnyPackage(above)
                    .because("layer " + Arrays.toString(layer) + " lies below " + Arrays.toString(above)));
        }
        return CompositeArchRule.of(rules);
    }

    /** The top-level packages under {@code root} (each with its subpackages) must not depend on each other in a cycle. */
    public static SliceRule noCyclesBetweenPackagesOf(String root) {
        return SlicesRuleDefinition.slices().matching(root + ".(*)..").should().beFreeOfCycles();
    }

    /** No class may reference a class of one of these packages (ArchUnit patterns, e.g. {@code org.springframework..}). */
    public static ArchRule noDependencyOn(String... packages) {
        return noClasses().should().dependOnClassesThat().resideInAnyPackage(packages);
    }

    /** True for a package named {@code internal} or inside one. */
    public static boolean isInternal(String packageName) {
        return Stream.of(packageName.split("\\.")).anyMatch("internal"::equals);
    }

    /** A public type reachable from outside: public, and every enclosing class public too. */
    static boolean isPublicType(JavaClass type) {
        if (!type.getModifiers().contains(JavaModifier.PUBLIC) || type.isAnonymousClass() || type.isLocalClass()) {
            return false;
        }
        return type.getEnclosingClass().map(ArchitectureRules::isPublicType).orElse(true);
    }

    /**
     * Where a public type of a non-internal package mentions a type of an internal package in its public or protected
     * signature (supertypes, fields, constructors, methods: parameters, return and thrown types, type arguments).
     * One entry per member, {@code Owner#member -> InternalType} ({@code <init>} for constructors), sorted.
     */
    public static Set<String> internalTypesInApiSignatures(JavaClasses classes) {
        Set<String> leaks = new TreeSet<>();
        for (JavaClass type : classes) {
            if (isInternal(type.getPackageName()) || !isPublicType(type)) {
                continue;
            }
            String owner = type.getName();
            type.getSuperclass().ifPresent(s -> report(leaks, owner + " extends", s));
            type.getInterfaces().forEach(i -> report(leaks, owner + " implements", i));
            for (JavaMember member : type.getMembers()) {
                Set<JavaModifier> modifiers = member.getModifiers();
                if (!(modifiers.contains(JavaModifier.PUBLIC) || modifiers.contains(JavaModifier.PROTECTED))
                        || modifiers.contains(JavaModifier.SYNTHETIC)) {
                    continue;
                }
                String where = owner + "#" + member.getName();
                if (member instanceof com.tngtech.archunit.core.domain.JavaField field) {
                    report(leaks, where, field.getType());
                } else if (member instanceof JavaCodeUnit code) {
                    report(leaks, where, code.getReturnType());
                    code.getParameterTypes().forEach(p -> report(leaks, where, p));
                    code.getThrowsClause().getTypes().forEach(t -> report(leaks, where, t));
                }
            }
        }
        return leaks;
    }

    private static void report(Set<String> leaks, String where, JavaType mentioned) {
        for (JavaClass raw : mentioned.getAllInvolvedRawTypes()) {
            JavaClass base = raw.isArray() ? raw.getBaseComponentType() : raw;
            if (isInternal(base.getPackageName())) {
                leaks.add(where + " -> " + base.getName());
            }
        }
    }
}
