package io.rmq.readme;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every Java block of the documentation is a region of a source the build compiles ({@link Docs#regions()}), copied
 * verbatim, so it cannot show an API that does not exist. README.md has no exception; docs/*.md still has a few
 * blocks written before this check, counted here so that their number only goes down.
 */
class JavaBlocksTest {

    /** Java blocks of docs/*.md not converted to compiled regions yet; lower it as they are converted. */
    private static final int NOT_YET_COMPILED = 6;

    @Test
    void everyJavaBlockOfTheReadmeIsACompiledRegion() {
        assertThat(notCompiled(List.of(Path.of("README.md"), Path.of("CONTRIBUTING.md")))).isEmpty();
    }

    @Test
    void theDocsJavaBlocksAreCompiledRegionsButACountedFew() {
        List<Path> docs = Docs.pages().stream().filter(page -> page.startsWith("docs")).toList();
        assertThat(docs).as("docs/*.md").isNotEmpty();
        List<String> notCompiled = notCompiled(docs);
        assertThat(notCompiled).as("Java blocks of docs/*.md that are no compiled region (at most %d)",
                NOT_YET_COMPILED).hasSizeLessThanOrEqualTo(NOT_YET_COMPILED);
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
            for (String block : Docs.javaBlocks(Docs.read(page))) {
                if (!regions.contains(block)) {
                    notCompiled.add(page + ": " + block.lines().findFirst().orElse(""));
                }
            }
        }
        return notCompiled;
    }
}
