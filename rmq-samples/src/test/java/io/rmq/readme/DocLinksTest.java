package io.rmq.readme;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every relative link of README.md, CONTRIBUTING.md and docs/*.md leads to a file that exists and, with an anchor, to a
 * heading of that file, by GitHub's rules for heading anchors.
 */
class DocLinksTest {

    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

    @Test
    void everyRelativeLinkAndAnchorResolves() {
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path page : Docs.pages()) {
            for (String target : links(Docs.read(page))) {
                if (target.matches("[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
                    continue;   // http:, https:, mailto:
                }
                checked++;
                int hash = target.indexOf('#');
                String file = hash < 0 ? target : target.substring(0, hash);
                Path resolved = file.isEmpty() ? page : page.resolveSibling(file).normalize();
                if (!Files.exists(Docs.ROOT.resolve(resolved))) {
                    broken.add(page + ": " + target + " (no file " + resolved + ")");
                }
                else if (hash >= 0 && !anchors(Docs.read(resolved)).contains(target.substring(hash + 1))) {
                    broken.add(page + ": " + target + " (no such heading in " + resolved + ")");
                }
            }
        }
        assertThat(checked).as("relative links checked").isGreaterThan(50);
        assertThat(broken).isEmpty();
    }

    @Test
    void anchorsFollowGithubsRules() {
        assertThat(anchors("""
                # RMQ — a Redis message queue
                ## Consumption: two phases, retries, dead queue
                ```bash
                # not a heading
                ```
                ### `RmqTemplate` and Co.
                ## Limits
                ## Limits
                """)).containsExactlyInAnyOrder("rmq--a-redis-message-queue",
                "consumption-two-phases-retries-dead-queue", "rmqtemplate-and-co", "limits", "limits-1");
    }

    /** The link targets of a page, outside code blocks. */
    private static List<String> links(String markdown) {
        List<String> targets = new ArrayList<>();
        boolean fenced = false;
        for (String line : markdown.lines().toList()) {
            if (line.startsWith("```")) {
                fenced = !fenced;
            }
            else if (!fenced) {
                Matcher link = LINK.matcher(line);
                while (link.find()) {
                    targets.add(link.group(1));
                }
            }
        }
        return targets;
    }

    /**
     * The anchors GitHub gives a page's headings: lowercase, punctuation dropped (letters, digits, spaces, '-' and '_'
     * stay), spaces to '-'; a repeated anchor gets -1, -2, ….
     */
    static Set<String> anchors(String markdown) {
        Map<String, Integer> seen = new HashMap<>();
        boolean fenced = false;
        for (String line : markdown.lines().toList()) {
            if (line.startsWith("```")) {
                fenced = !fenced;
            }
            else if (!fenced && line.matches("#{1,6} .*")) {
                String anchor = line.replaceFirst("^#+ ", "").strip().toLowerCase()
                        .replaceAll("[^\\p{L}\\p{N}\\p{M} _-]", "").replace(' ', '-');
                int count = seen.merge(anchor, 1, Integer::sum);
                if (count > 1) {
                    seen.put(anchor + "-" + (count - 1), 1);
                }
            }
        }
        return seen.keySet();
    }
}
