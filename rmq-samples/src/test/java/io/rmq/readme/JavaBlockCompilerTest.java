package io.rmq.readme;

import java.io.IOException;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The documentation's compile check fails where a reader's copy would: a block that lacks an import, or a type. */
class JavaBlockCompilerTest {

    private static final String COMPONENT = """
            @Component
            class Job {
            }
            """;

    @Test
    void aBlockThatLacksAnImportFailsNamingThePageLineAndTheSymbol() throws IOException {
        String page = "# Page\n\n```java\n" + COMPONENT + "```\n";
        List<String> problems = compile(page);
        assertThat(problems).hasSize(1);
        assertThat(problems.get(0)).startsWith("docs/page.md:4: cannot find symbol");
    }

    @Test
    void theSameBlockWithItsImportCompiles() throws IOException {
        String page = "```java\nimport org.springframework.stereotype.Component;\n\n" + COMPONENT + "```\n";
        assertThat(compile(page)).isEmpty();
    }

    @Test
    void importsStatedOnceForThePageServeEveryBlockOfIt() throws IOException {
        String page = "Imports:\n\n```java\nimport org.springframework.stereotype.Component;\n```\n\n```java\n"
                + COMPONENT + "```\n\n```java\n@Component\nclass OtherJob {\n    Job job;\n}\n```\n";
        assertThat(compile(page)).isEmpty();
    }

    @Test
    void aTypeThePageNeverDefinesFails() throws IOException {
        String page = """
                ```java
                import org.springframework.stereotype.Component;

                @Component
                class NightlyReport {

                    private final ReportService reports;

                    NightlyReport(ReportService reports) {
                        this.reports = reports;
                    }
                }
                ```
                """;
        assertThat(compile(page)).isNotEmpty().allMatch(p -> p.contains("cannot find symbol"))
                .anyMatch(p -> p.startsWith("docs/page.md:7:"));
    }

    @Test
    void aBareBeanMethodIsNoCompilationUnit() throws IOException {
        String page = "```java\nimport org.springframework.context.annotation.Bean;\n\n@Bean\nString name() {\n"
                + "    return \"rmq\";\n}\n```\n";
        assertThat(compile(page)).isNotEmpty();
    }

    @Test
    void aMarkedFragmentIsNotCompiled() throws IOException {
        String page = "```java fragment\nrmq.sendPriority(\"t\", body, 5);\n```\n";
        List<JavaBlockCompiler.Block> blocks = JavaBlockCompiler.blocks("docs/page.md", page);
        assertThat(blocks).singleElement().satisfies(b -> assertThat(b.fragment()).isTrue());
        assertThat(compile(page)).isEmpty();
        assertThat(compile(page.replace("```java fragment", "```java"))).isNotEmpty();
    }

    @Test
    void anImportThatDoesNotExistFailsOnThePagesImports() throws IOException {
        String page = "```java\nimport org.example.Missing;\n```\n\n```java\nclass Job {\n}\n```\n";
        assertThat(compile(page)).singleElement().asString().startsWith("docs/page.md:5 (the page's imports): ");
    }

    private static List<String> compile(String markdown) throws IOException {
        return JavaBlockCompiler.compile(JavaBlockCompiler.blocks("docs/page.md", markdown), List.of(),
                DocJavaBlocksCompileTest.classpath());
    }
}
