package io.rmq.readme;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * Compiles the Java blocks of a documentation page as a reader copies them: with no import but those the page shows.
 * The rules a page follows, which this class checks:
 * <ul>
 * <li>A block is a whole compilation unit without its {@code package} line: imports first, then one or more types.
 * The blocks of one page share a package, so one block may use a type another block of the page declares.</li>
 * <li>A block made only of {@code import} lines states imports once for the page: every block of the page is
 * compiled with them, as if it began with them.</li>
 * <li>A block opened with {@code ```java fragment} is an excerpt on purpose (a call or a method shown in the prose's
 * context, whose surroundings the page describes) and is not compiled; it is still a region of a compiled source
 * ({@link JavaBlocksTest}).</li>
 * </ul>
 * A page may also build on blocks of another page (the testing guide tests the README's Quick start application): the
 * caller passes those as {@code context}, compiled with the page's blocks. Stateless.
 */
final class JavaBlockCompiler {

    /** The info string that marks a Java block as a deliberate excerpt. */
    static final String FRAGMENT = "fragment";

    private static final Pattern FENCE = Pattern.compile("(?m)^```java( [^\\n]*)?\\n(.*?)^```$", Pattern.DOTALL);
    private static final Pattern IMPORT = Pattern.compile("import (static )?[\\w.]+(\\.\\*)?;");
    private static final Pattern PUBLIC_TYPE = Pattern.compile(
            "(?m)^public (?:final |abstract |sealed |non-sealed )*(?:class|record|interface|enum|@interface) (\\w+)");

    private JavaBlockCompiler() {
    }

    /**
     * One {@code ```java} block.
     *
     * @param page where it is, for messages ({@code docs/scheduling.md})
     * @param line the line of its opening fence (1-based)
     * @param info what follows {@code ```java} on that line, trimmed
     * @param code its lines, each ending with a line break
     */
    record Block(String page, int line, String info, String code) {

        boolean fragment() {
            return info.equals(FRAGMENT);
        }

        /** Only import lines (and blank lines or comments): imports stated for the whole page. */
        boolean importsOnly() {
            List<String> lines = code.lines().map(String::strip)
                    .filter(l -> !l.isEmpty() && !l.startsWith("//")).toList();
            return !lines.isEmpty() && lines.stream().allMatch(l -> IMPORT.matcher(l).matches());
        }

        String where() {
            return page + ":" + line;
        }
    }

    /** The {@code ```java} blocks of a page, with the line each opens on. */
    static List<Block> blocks(String page, String markdown) {
        List<Block> blocks = new ArrayList<>();
        Matcher fence = FENCE.matcher(markdown);
        while (fence.find()) {
            int line = (int) markdown.substring(0, fence.start()).chars().filter(c -> c == '\n').count() + 1;
            String info = fence.group(1) == null ? "" : fence.group(1).strip();
            blocks.add(new Block(page, line, info, fence.group(2)));
        }
        return blocks;
    }

    /**
     * Compiles the page's blocks that are neither fragments nor imports, each with the page's stated imports, together
     * with {@code context}, against {@code classpath}.
     *
     * @return what the compiler reports, as {@code page:line: message} with the line in the page; empty: every block
     *         compiles
     */
    static List<String> compile(List<Block> page, List<Block> context, String classpath) {
        List<String> imports = page.stream().filter(Block::importsOnly).map(Block::code).toList();
        String packageName = "docs." + (page.isEmpty() ? "none"
                : Path.of(page.get(0).page()).getFileName().toString().replaceAll("\\.md$", "")
                        .replaceAll("[^A-Za-z0-9]", "_").toLowerCase(Locale.ROOT));
        List<Unit> units = new ArrayList<>();
        for (Block block : page) {
            if (!block.fragment() && !block.importsOnly()) {
                units.add(unit(packageName, imports, block, units.size()));
            }
        }
        for (Block block : context) {
            units.add(unit(packageName, List.of(), block, units.size()));
        }
        if (units.isEmpty()) {
            return List.of();
        }
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        Path classes;
        try {
            classes = Files.createTempDirectory("doc-blocks");
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try (StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, Locale.ROOT, null)) {
            List<String> options = List.of("-classpath", classpath, "-d", classes.toString(), "-proc:none",
                    "-implicit:none", "-Xlint:none", "-nowarn");
            compiler.getTask(null, files, diagnostics, options, null, units).call();
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        finally {
            delete(classes);
        }
        List<String> problems = new ArrayList<>();
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() != Diagnostic.Kind.ERROR) {
                continue;
            }
            String where = d.getSource() instanceof Unit unit ? unit.pageLine(d.getLineNumber()) : "?";
            // "cannot find symbol" and the symbol's line: what the reader would have to guess
            problems.add(where + ": " + String.join(" ", d.getMessage(Locale.ROOT).lines().limit(2)
                    .map(String::strip).toList()));
        }
        return problems;
    }

    private static Unit unit(String packageName, List<String> imports, Block block, int index) {
        StringBuilder source = new StringBuilder("package ").append(packageName).append(";\n");
        imports.forEach(source::append);
        int prefixLines = (int) source.chars().filter(c -> c == '\n').count();
        source.append(block.code());
        Matcher type = PUBLIC_TYPE.matcher(block.code());
        String name = type.find() ? type.group(1) : "Block" + index;
        return new Unit(packageName.replace('.', '/') + "/" + name, source.toString(), block, prefixLines);
    }

    /** A block as a source file: the package line and the page's imports, then the block. */
    private static final class Unit extends SimpleJavaFileObject {

        private final String source;
        private final Block block;
        private final int prefixLines;

        Unit(String path, String source, Block block, int prefixLines) {
            super(URI.create("string:///" + path + Kind.SOURCE.extension), Kind.SOURCE);
            this.source = source;
            this.block = block;
            this.prefixLines = prefixLines;
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return source;
        }

        /** A line of this source as the line of the page: the fence is the block's line, its code starts after. */
        String pageLine(long sourceLine) {
            long inBlock = sourceLine - prefixLines;
            return inBlock >= 1 ? block.page() + ":" + (block.line() + inBlock)
                    : block.where() + " (the page's imports)";
        }
    }

    private static void delete(Path directory) {
        try (var paths = Files.walk(directory)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
