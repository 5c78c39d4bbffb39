package io.rmq.readme;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every Java block of docs/*.md compiles as a reader copies it, with only the imports its page shows
 * ({@link JavaBlockCompiler} states the rules: a block is a compilation unit; an imports-only block states imports
 * for its page; {@code ```java fragment} marks a deliberate excerpt, not compiled). The blocks are compiled against the
 * test class path that Maven writes for this purpose ({@code target/doc-blocks.classpath}, which also holds the
 * libraries the pages use but the tests' run leaves out: Modulith's and Spring Security's).
 * <p>
 * docs/testing.md tests the README's Quick start application: its blocks are compiled with the Quick start's.
 */
class DocJavaBlocksCompileTest {

    @Test
    void everyJavaBlockOfTheDocsCompilesWithTheImportsItsPageShows() throws IOException {
        String classpath = classpath();
        List<JavaBlockCompiler.Block> quickStart = JavaBlockCompiler.blocks("README.md",
                Docs.section(Docs.read("README.md"), "## Quick start"));
        assertThat(quickStart).as("the Quick start's Java blocks").hasSizeGreaterThanOrEqualTo(4);
        List<String> problems = new ArrayList<>();
        int compiled = 0;
        for (Path page : Docs.pages()) {
            if (!page.startsWith("docs")) {
                continue;
            }
            List<JavaBlockCompiler.Block> blocks = JavaBlockCompiler.blocks(page.toString(), Docs.read(page));
            compiled += (int) blocks.stream().filter(b -> !b.fragment() && !b.importsOnly()).count();
            problems.addAll(JavaBlockCompiler.compile(blocks,
                    page.equals(Path.of("docs", "testing.md")) ? quickStart : List.of(), classpath));
        }
        assertThat(problems).as("what the compiler says of docs/*.md's Java blocks").isEmpty();
        // the check is only as good as what it compiles: most blocks are whole, fragments the exception
        assertThat(compiled).as("blocks compiled").isGreaterThanOrEqualTo(15);
    }

    @Test
    void everyFragmentIsMarkedAsSuchAndNothingElseFollowsTheFence() {
        for (Path page : Docs.pages()) {
            for (JavaBlockCompiler.Block block : JavaBlockCompiler.blocks(page.toString(), Docs.read(page))) {
                assertThat(block.info()).as("%s: what follows ```java", block.where())
                        .isIn("", JavaBlockCompiler.FRAGMENT);
            }
        }
    }

    /** The class path Maven wrote for this test (see the module's pom); a run without it fails, not passes. */
    static String classpath() throws IOException {
        String file = System.getProperty("doc-blocks.classpath", "target/doc-blocks.classpath");
        assertThat(Path.of(file)).as("the class path file that Maven's generate-test-resources phase writes").exists();
        return Files.readString(Path.of(file)).strip();
    }
}
