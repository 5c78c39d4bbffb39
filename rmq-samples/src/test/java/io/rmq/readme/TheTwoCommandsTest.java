package io.rmq.readme;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * CI runs the README's two commands as a newcomer would (the sample first, in its documented exit-when-done form,
 * then the tests): the commands in {@code .ci/run} and in the README's "The two commands" cannot drift apart.
 */
class TheTwoCommandsTest {

    private static final Path README = Path.of("..", "README.md");
    private static final Path CI = Path.of("..", ".ci", "run");
    private static final String EXIT_WHEN_DONE = " -Dspring-boot.run.arguments=--samples.exit-when-done=true";

    @Test
    void ciRunsTheReadmesTwoCommandsAsWritten() throws IOException {
        List<String> readme = readmeCommands();
        assertThat(readme).hasSize(2);
        List<String> ci = ciCommands();
        assertThat(ci).as("the Maven commands .ci/run runs").hasSize(2);
        assertThat(ci.get(0)).isEqualTo(readme.get(0) + EXIT_WHEN_DONE);
        assertThat(ci.get(1)).isEqualTo(readme.get(1));
    }

    @Test
    void theExitWhenDoneFormCiUsesIsTheOneTheReadmeDocuments() throws IOException {
        assertThat(Files.readString(README)).contains("`" + EXIT_WHEN_DONE.strip() + "` exits after the");
        // the property it sets is the sample's own
        assertThat(Files.readString(Path.of("src", "main", "resources", "application.yml")))
                .contains("\nsamples:\n").contains("\n  exit-when-done: false\n");
    }

    /** The command lines of the bash block under "## The two commands", comments and blank lines left out. */
    private static List<String> readmeCommands() throws IOException {
        String readme = Files.readString(README);
        int section = readme.indexOf("\n## The two commands\n");
        assertThat(section).as("README heading 'The two commands'").isNotNegative();
        Matcher block = Pattern.compile("(?m)^```bash\\n(.*?)^```$", Pattern.DOTALL).matcher(readme);
        assertThat(block.find(section)).as("a bash block under 'The two commands'").isTrue();
        return block.group(1).lines().map(String::strip)
                .filter(line -> !line.isEmpty() && !line.startsWith("#")).toList();
    }

    /** Every line of .ci/run that runs the wrapper, without {@code exec} and leading environment assignments. */
    private static List<String> ciCommands() throws IOException {
        Pattern prefix = Pattern.compile("^(exec\\s+)?([A-Z_]+=\\S*\\s+)*");
        return Files.readAllLines(CI).stream().map(String::strip)
                .filter(line -> !line.startsWith("#") && line.contains("./mvnw"))
                .map(line -> prefix.matcher(line).replaceFirst("")).toList();
    }
}
