package io.rmq.readme;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The project's documentation as the tests read it: its pages (README.md, CONTRIBUTING.md, docs/*.md), their sections
 * and code blocks, and the regions of compiled sources ({@code tag::<name>[]} to {@code end::<name>[]}) its code
 * blocks are copied from.
 */
final class Docs {

    /** The repository root, seen from rmq-samples (the tests' working directory). */
    static final Path ROOT = Path.of("..");

    /** Where tagged regions are looked for: the sources compiled by the build's tests. */
    private static final List<Path> SOURCE_ROOTS = List.of(Path.of("src", "test", "java"),
            Path.of("src", "test", "resources"), ROOT.resolve(Path.of("rmq-core", "src", "test", "java")),
            ROOT.resolve(Path.of("rmq-spring-boot-autoconfigure", "src", "test", "java")),
            ROOT.resolve(Path.of("rmq-modulith", "src", "test", "java")));

    private static final Pattern TAG = Pattern.compile("tag::([A-Za-z0-9_-]+)\\[]");

    private Docs() {
    }

    /** README.md, CONTRIBUTING.md and docs/*.md, relative to the root. */
    static List<Path> pages() {
        List<Path> pages = new ArrayList<>(List.of(Path.of("README.md"), Path.of("CONTRIBUTING.md")));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(page -> page.toString().endsWith(".md")).sorted()
                    .forEach(page -> pages.add(ROOT.relativize(page)));
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return pages;
    }

    /** A page's text, by its path from the root (e.g. {@code docs/listeners.md}). */
    static String read(String page) {
        return read(Path.of(page));
    }

    static String read(Path page) {
        try {
            return Files.readString(ROOT.resolve(page));
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every page's text, one string. */
    static String all() {
        StringBuilder all = new StringBuilder();
        pages().forEach(page -> all.append(read(page)).append('\n'));
        return all.toString();
    }

    /**
     * From the heading line (e.g. {@code ## Quick start}, or {@code # Listener guide} at the top of a page) to the next
     * heading of the same or a higher level outside code blocks.
     */
    static String section(String markdown, String heading) {
        int level = heading.indexOf(' ');
        List<String> lines = markdown.lines().toList();
        int start = lines.indexOf(heading);
        assertThat(start).as("heading %s", heading).isNotNegative();
        int end = lines.size();
        boolean fenced = false;
        for (int i = start + 1; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.startsWith("```")) {
                fenced = !fenced;
            }
            else if (!fenced && line.matches("#{1," + level + "} .*")) {
                end = i;
                break;
            }
        }
        return String.join("\n", lines.subList(start, end)) + "\n";
    }

    /** The contents of the fenced code blocks, each ending with a line break. */
    static List<String> codeBlocks(String markdown) {
        return blocks(markdown, "[a-z]*");
    }

    /** The contents of the {@code ```java} blocks. */
    static List<String> javaBlocks(String markdown) {
        return blocks(markdown, "java");
    }

    private static List<String> blocks(String markdown, String language) {
        List<String> blocks = new ArrayList<>();
        // the fence's info string may go on after the language: ```java fragment (see JavaBlockCompiler)
        Matcher fence = Pattern.compile("(?m)^```" + language + "(?: [^\\n]*)?\\n(.*?)^```$", Pattern.DOTALL)
                .matcher(markdown);
        while (fence.find()) {
            blocks.add(fence.group(1));
        }
        return blocks;
    }

    /**
     * The lines between the tag's start and end markers, each ending with a line break, without the indentation they
     * all share (a region inside a method reads in the documentation as it would at the top level) and without the
     * markers of regions nested in it.
     */
    static String region(Path source, String tag) {
        List<String> lines;
        try {
            lines = Files.readAllLines(source);
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int start = -1;
        int end = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains("tag::" + tag + "[]")) {
                start = i;
            }
            else if (lines.get(i).contains("end::" + tag + "[]")) {
                end = i;
            }
        }
        assertThat(start).as("start marker of %s in %s", tag, source).isNotNegative();
        assertThat(end).as("end marker of %s in %s", tag, source).isGreaterThan(start);
        List<String> body = lines.subList(start + 1, end).stream()
                .filter(line -> !line.contains("tag::") && !line.contains("end::")).toList();
        int indent = body.stream().filter(line -> !line.isBlank())
                .mapToInt(line -> line.length() - line.stripLeading().length()).min().orElse(0);
        StringBuilder region = new StringBuilder();
        for (String line : body) {
            region.append(line.isBlank() ? "" : line.substring(indent)).append('\n');
        }
        return region.toString();
    }

    /** Every tagged region of the compiled test sources, by tag. */
    static Map<String, String> regions() {
        Map<String, String> regions = new LinkedHashMap<>();
        for (Path root : SOURCE_ROOTS) {
            try (Stream<Path> files = Files.walk(root)) {
                for (Path source : files.filter(Files::isRegularFile).toList()) {
                    Matcher tag = TAG.matcher(Files.readString(source));
                    while (tag.find()) {
                        String previous = regions.put(tag.group(1), region(source, tag.group(1)));
                        assertThat(previous).as("tag %s is used once (again in %s)", tag.group(1), source).isNull();
                    }
                }
            }
            catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return regions;
    }
}
