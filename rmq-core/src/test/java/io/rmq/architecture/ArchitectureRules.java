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

    /**
     * The import cycles between top-level classes of {@code classes} (a nested class counts as its top-level class):
     * each strongly connected group of two or more, its members sorted and joined by " <-> ". Any dependency in the
     * bytecode counts (a field, a call, a class literal such as a logger's name), as a newcomer reading the imports
     * would follow it; Javadoc links do not.
     */
    public static List<String> classCycles(JavaClasses classes) {
        java.util.Map<String, Set<String>> edges = new java.util.TreeMap<>();
        for (JavaClass c : classes) {
            String from = topLevel(c);
            Set<String> out = edges.computeIfAbsent(from, k -> new TreeSet<>());
            c.getDirectDependenciesFromSelf().forEach(d -> {
                JavaClass target = d.getTargetClass();
                if (classes.contain(target.getName())) {
                    String to = topLevel(target);
                    if (!to.equals(from)) {
                        out.add(to);
                    }
                }
            });
        }
        // Tarjan's strongly connected components, iterative enough for a few hundred classes
        java.util.Map<String, Integer> index = new java.util.HashMap<>();
        java.util.Map<String, Integer> low = new java.util.HashMap<>();
        java.util.Deque<String> stack = new java.util.ArrayDeque<>();
        Set<String> onStack = new java.util.HashSet<>();
        List<String> cycles = new ArrayList<>();
        int[] counter = {0};
        for (String v : edges.keySet()) {
            if (!index.containsKey(v)) {
                strongConnect(v, edges, index, low, stack, onStack, cycles, counter);
            }
        }
        cycles.sort(null);
        return cycles;
    }

    private static void strongConnect(String v, java.util.Map<String, Set<String>> edges,
            java.util.Map<String, Integer> index, java.util.Map<String, Integer> low, java.util.Deque<String> stack,
            Set<String> onStack, List<String> cycles, int[] counter) {
        index.put(v, counter[0]);
        low.put(v, counter[0]++);
        stack.push(v);
        onStack.add(v);
        for (String w : edges.getOrDefault(v, Set.of())) {
            if (!index.containsKey(w)) {
                strongConnect(w, edges, index, low, stack, onStack, cycles, counter);
                low.put(v, Math.min(low.get(v), low.get(w)));
            }
            else if (onStack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            Set<String> component = new TreeSet<>();
            String w;
            do {
                w = stack.pop();
                onStack.remove(w);
                component.add(w);
            } while (!w.equals(v));
            if (component.size() > 1) {
                cycles.add(String.join(" <-> ", component));
            }
        }
    }

    private static String topLevel(JavaClass c) {
        JavaClass top = c;
        while (top.getEnclosingClass().isPresent()) {
            top = top.getEnclosingClass().get();
        }
        return top.getName();
    }
}
