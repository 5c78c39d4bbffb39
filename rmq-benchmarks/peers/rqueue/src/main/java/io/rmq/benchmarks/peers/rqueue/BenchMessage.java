package io.rmq.benchmarks.peers.rqueue;

/**
 * The benchmark payload, {@code {"id":i,"body":"<80 chars>"}}. Serialized by Rqueue's default converter
 * (Jackson JSON wrapped with the class name), so producer and consumer processes must share this class.
 */
public class BenchMessage {

    private int id;
    private String body;

    public BenchMessage() {
    }

    public BenchMessage(int id, String body) {
        this.id = id;
        this.body = body;
    }

    /** Message {@code i}: distinct 80-character body. */
    public static BenchMessage of(int i) {
        String prefix = "message-" + i + "-";
        StringBuilder sb = new StringBuilder(80).append(prefix);
        while (sb.length() < 80) {
            sb.append((char) ('a' + (sb.length() % 26)));
        }
        return new BenchMessage(i, sb.toString());
    }

    public int getId() {
        return id;
    }

    public void setId(int id) {
        this.id = id;
    }

    public String getBody() {
        return body;
    }

    public void setBody(String body) {
        this.body = body;
    }
}
