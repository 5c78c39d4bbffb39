package io.rmq.readme;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every Java block of the documentation (README.md, CONTRIBUTING.md, docs/*.md) is a region of a source the build
 * compiles ({@link Docs#regions()}), copied verbatim, so it cannot show an API that does not exist and the tests that
 * run those sources run what the page shows. A block of imports only, which states the imports of its page, is no
 * region: {@link DocJavaBlocksCompileTest} compiles it with every block of its page.
 */
class JavaBlocksTest {

    @Test
    void everyJavaBlockOfTheDocumentationIsACompiledRegion() {
        List<Path> pages = Docs.pages();
        assertThat(pages).as("pages").contains(Path.of("README.md"), Path.of("docs", "listeners.md"));
        assertThat(notCompiled(pages)).as("Java blocks that are no compiled region").isEmpty();
    }

    @Test
    void theRegionsAreFoundInTheSources() {
        // the check above is only as good as the regions it compares with
        assertThat(Docs.regions()).containsKeys("quickstart-listener", "engine", "tour-merging", "testing-await");
        assertThat(Docs.javaBlocks(Docs.read("README.md"))).hasSizeGreaterThan(10);
    }

    /** "page: first line" of each Java block of these pages that is no region. */
    private static List<String> notCompiled(List<Path> pages) {
        Collection<String> regions = Docs.regions().values();
        List<String> notCompiled = new ArrayList<>();
        for (Path page : pages) {
            for (JavaBlockCompiler.Block javaBlock : JavaBlockCompiler.blocks(page.toString(), Docs.read(page))) {
                String block = javaBlock.code();
                if (!javaBlock.importsOnly() && !regions.contains(block)) {
                    notCompiled.add(page + ": " + block.lines().findFirst().orElse(""));
                }
            }
        }
        return notCompiled;
    }
}
