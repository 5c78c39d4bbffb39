package io.rmq.autoconfigure;

import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.core.ResolvableType;
import org.jspecify.annotations.Nullable;

/**
 * The keys a configuration properties record takes, derived from its structure (so the list cannot drift from the
 * code): a record component is a key in its dashed form, a nested record a group of keys, a {@code Map} (or a list)
 * an entry of any name (index) whose keys are those of its value type, anything else a value. Elements are compared
 * as Boot's relaxed binding compares them: case, dashes and underscores aside, so {@code batchSize},
 * {@code batch-size} and {@code batch_size} are one key; brackets and dots are the same nesting.
 * <p>
 * The entries of {@code dottedEntries} (for RMQ: {@code rmq.topics}, see {@link TopicEntries}) may have names with
 * dots written without brackets, so such an entry's name spans one or more elements; any other entry's name is one
 * element ({@code rmq.listeners[orders.handle].mode}).
 */
final class RmqPropertyKeys {

    /** The keys RMQ takes under {@code rmq}. */
    static final RmqPropertyKeys RMQ = new RmqPropertyKeys(RmqProperties.class, "rmq", TopicEntries.TOPICS.toString());

    private sealed interface Node permits Value, Group, Entries {
    }

    /** A key that holds a value (no keys under it). */
    private record Value() implements Node {
    }

    /** A record's keys: uniform form -> the key. */
    private record Group(Map<String, Key> keys) implements Node {
    }

    private record Key(String name, Node node) {
    }

    /** A map's (or list's) entries: any name, then the keys of {@code value}. */
    private record Entries(Node value, boolean dotted) implements Node {
    }

    /** One element of a valid key; {@code entry}: the name of a map entry (any). */
    private record Pattern(String name, boolean entry, boolean dotted) {
    }

    private final String prefix;
    private final Node root;
    /** Every key that holds a value, as the elements after the prefix. */
    private final List<List<Pattern>> valueKeys = new ArrayList<>();

    RmqPropertyKeys(Class<? extends Record> type, String prefix, String dottedEntries) {
        this.prefix = prefix;
        this.root = node(ResolvableType.forClass(type), prefix, dottedEntries);
        collect(root, new ArrayList<>());
    }

    private static Node node(ResolvableType type, String path, String dottedEntries) {
        Class<?> raw = type.resolve(Object.class);
        if (raw.isRecord()) {
            Map<String, Key> keys = new LinkedHashMap<>();
            for (RecordComponent component : raw.getRecordComponents()) {
                String name = dashed(component.getName());
                keys.put(uniform(name), new Key(name, node(ResolvableType.forType(component.getGenericType()),
                        path + "." + name, dottedEntries)));
            }
            return new Group(keys);
        }
        if (Map.class.isAssignableFrom(raw)) {
            return new Entries(node(type.asMap().getGeneric(1), path + ".*", dottedEntries),
                    path.equals(dottedEntries));
        }
        if (Collection.class.isAssignableFrom(raw) || raw.isArray()) {
            ResolvableType element = raw.isArray() ? type.getComponentType() : type.asCollection().getGeneric(0);
            return new Entries(node(element, path + "[*]", dottedEntries), false);
        }
        return new Value();
    }

    private void collect(Node node, List<Pattern> path) {
        if (node instanceof Group group) {
            for (Key key : group.keys().values()) {
                path.add(new Pattern(key.name(), false, false));
                collect(key.node(), path);
                path.remove(path.size() - 1);
            }
        }
        else if (node instanceof Entries entries) {
            path.add(new Pattern("<name>", true, entries.dotted()));
            collect(entries.value(), path);
            path.remove(path.size() - 1);
        }
        else {
            valueKeys.add(List.copyOf(path));
        }
    }

    /** Every key that holds a value, entries named {@code <name>}: {@code rmq.topics.<name>.type}. */
    List<String> keys() {
        return valueKeys.stream().map(key -> render(key, key.stream().map(Pattern::name).toList())).toList();
    }

    /** Whether {@code name} (under the prefix) is a key of the record or a group of them. */
    boolean isKnown(ConfigurationPropertyName name) {
        return matches(root, elements(name), 0);
    }

    private static boolean matches(Node node, List<String> elements, int from) {
        if (from == elements.size()) {
            return true;
        }
        if (node instanceof Group group) {
            Key key = group.keys().get(uniform(elements.get(from)));
            return key != null && matches(key.node(), elements, from + 1);
        }
        if (node instanceof Entries entries) {
            if (!entries.dotted() || from + 1 == elements.size()) {
                return matches(entries.value(), elements, from + 1);
            }
            // a dotted name is followed by a key: otherwise any name under the entries would be one
            return IntStream.range(from + 1, elements.size()).anyMatch(end -> matches(entries.value(), elements, end));
        }
        return false;
    }

    /**
     * The valid key nearest to an unknown {@code name}, with its entry names as the user wrote them: one a typo away
     * (an edit distance of at most a quarter of its length, at least 2), or with the same last element at another
     * level ({@code rmq.batch-size} for {@code rmq.consumer.batch-size}); null when none is near.
     */
    @Nullable String nearest(ConfigurationPropertyName name) {
        List<String> written = elements(name);
        String wanted = comparable(written);
        String last = written.isEmpty() ? "" : uniform(written.get(written.size() - 1));
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (List<Pattern> key : valueKeys) {
            List<String> candidate = fill(key, written);
            int distance = distance(wanted, comparable(candidate));
            boolean near = distance <= Math.max(2, wanted.length() / 4)
                    || uniform(candidate.get(candidate.size() - 1)).equals(last);
            if (near && distance < bestDistance) {
                best = render(key, candidate);
                bestDistance = distance;
            }
        }
        return best;
    }

    /**
     * The keys of the deepest group that {@code name} reaches, as {@code "rmq.consumer takes concurrency, ..."}, for
     * an unknown key with no near one.
     */
    String keysNear(ConfigurationPropertyName name) {
        List<String> written = elements(name);
        Node node = root;
        Group group = (Group) root;
        int groupEnd = 0;
        for (int i = 0; i < written.size(); i++) {
            if (node instanceof Group g) {
                Key key = g.keys().get(uniform(written.get(i)));
                if (key == null) {
                    break;
                }
                node = key.node();
            }
            else if (node instanceof Entries entries) {
                node = entries.value();
            }
            else {
                break;
            }
            if (node instanceof Group g) {
                group = g;
                groupEnd = i + 1;
            }
        }
        String path = prefix + written.subList(0, groupEnd).stream().map(e -> "." + e).collect(Collectors.joining());
        return path + " takes " + group.keys().values().stream().map(Key::name).collect(Collectors.joining(", "));
    }

    /** The pattern's elements with its entry names taken from what was written at their place. */
    private static List<String> fill(List<Pattern> key, List<String> written) {
        int entries = (int) key.stream().filter(Pattern::entry).count();
        // with one entry name in the key, it takes whatever the written name has more (a dotted name)
        int span = entries == 1 ? Math.max(1, written.size() - key.size() + 1) : 1;
        List<String> filled = new ArrayList<>();
        int at = 0;
        for (Pattern element : key) {
            if (!element.entry()) {
                filled.add(element.name());
                at++;
            }
            else if (at < written.size()) {
                int end = Math.min(written.size(), at + span);
                filled.add(String.join(".", written.subList(at, end)));
                at = end;
            }
            else {
                filled.add(element.name());
                at++;
            }
        }
        return filled;
    }

    private String render(List<Pattern> key, List<String> filled) {
        StringBuilder text = new StringBuilder(prefix);
        for (int i = 0; i < filled.size(); i++) {
            Pattern element = key.get(i);
            boolean bracket = element.entry() && !element.dotted() && filled.get(i).contains(".");
            text.append(bracket ? "[" + filled.get(i) + "]" : "." + filled.get(i));
        }
        return text.toString();
    }

    private List<String> elements(ConfigurationPropertyName name) {
        int skip = ConfigurationPropertyName.of(prefix).getNumberOfElements();
        return IntStream.range(skip, name.getNumberOfElements()).mapToObj(i -> name.getElement(i, Form.ORIGINAL))
                .toList();
    }

    private static String comparable(List<String> elements) {
        return elements.stream().map(e -> e.toLowerCase(Locale.ROOT).replace("-", "").replace("_", ""))
                .collect(Collectors.joining("."));
    }

    /** The form relaxed binding compares: lower case, letters and digits only. */
    static String uniform(String element) {
        return element.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "");
    }

    private static String dashed(String camelCase) {
        return camelCase.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
    }

    /** Levenshtein distance. */
    private static int distance(String a, String b) {
        int[] previous = IntStream.rangeClosed(0, b.length()).toArray();
        for (int i = 1; i <= a.length(); i++) {
            int[] current = new int[b.length() + 1];
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            previous = current;
        }
        return previous[b.length()];
    }
}
