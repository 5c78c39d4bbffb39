package io.rmq.benchmarks;

import java.util.HashMap;
import java.util.Map;

/**
 * Command line of a peer (see PROTOCOL.md): {@code <workload> --host H --port P [--messages N] [--concurrency C]
 * [--seconds S] [--warmup-seconds W]}, plus options of RMQ-only workloads (e.g. {@code --mode}, {@code --kills}),
 * read with {@link #option}.
 */
record PeerArgs(String workload, String host, int port, int messages, int concurrency, int seconds,
        int warmupSeconds, Map<String, String> options) {

    /** A workload-specific option, or {@code fallback}. */
    String option(String name, String fallback) {
        return options.getOrDefault(name, fallback);
    }

    int intOption(String name, int fallback) {
        return Integer.parseInt(option(name, Integer.toString(fallback)));
    }

    static PeerArgs parse(String[] args) {
        if (args.length == 0) {
            throw new IllegalArgumentException("usage: <workload> --host H --port P [--messages N] [--concurrency C] [--seconds S]");
        }
        Map<String, String> options = new HashMap<>();
        for (int i = 1; i + 1 < args.length; i += 2) {
            options.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        String workload = args[0];
        int defaultMessages = switch (workload) {
            case "delay" -> 10_000;
            case "fill" -> 1_000_000;
            case "ordered-consume" -> 100_000;
            default -> 200_000;
        };
        int defaultSeconds = switch (workload) {
            case "delay" -> 10;
            case "idle" -> 12;
            default -> 120;
        };
        return new PeerArgs(workload, options.getOrDefault("host", "127.0.0.1"),
                Integer.parseInt(options.getOrDefault("port", "6379")),
                Integer.parseInt(options.getOrDefault("messages", Integer.toString(defaultMessages))),
                Integer.parseInt(options.getOrDefault("concurrency", "8")),
                Integer.parseInt(options.getOrDefault("seconds", Integer.toString(defaultSeconds))),
                Integer.parseInt(options.getOrDefault("warmup-seconds", "0")), Map.copyOf(options));
    }

    /** The W1/W2 body: {"id":i,"body":"<80 characters>"}, about 100 bytes. */
    static String body(long id) {
        return "{\"id\":" + id + ",\"body\":\"" + FILLER + "\"}";
    }

    static final String FILLER = "lorem-ipsum-dolor-sit-amet-consectetur-adipiscing-elit-sed-do-eiusmod-tempor-inc";
}
