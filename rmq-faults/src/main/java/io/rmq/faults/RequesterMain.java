package io.rmq.faults;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import io.lettuce.core.RedisURI;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.core.TopicType;
import io.rmq.producer.OutgoingMessage;
import io.rmq.redis.RedisClientSettings;
import io.rmq.redis.RmqRedisClient;

/**
 * A requester process of the fault suite: sends one request ({@code RmqReplies}) to a RANGE_MERGE topic and waits for
 * its reply, as a service calling another through RMQ would. Prints {@code INBOX <id>} (its reply inbox) and
 * {@code SENT} once the request is written, then {@code REPLY <value>} or {@code FAILED <error>}, and exits. The
 * scenarios kill it (-9) while it waits.
 * <p>
 * Arguments ({@code --name value}): {@code redis} (host:port), {@code prefix}, {@code topic}, {@code slots},
 * {@code body}, {@code timeout-ms}.
 */
public final class RequesterMain {

    private RequesterMain() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            options.put(args[i].substring(2), args[i + 1]);
        }
        String hostPort = options.get("redis");
        int colon = hostPort.lastIndexOf(':');
        RmqRedisClient client = RmqRedisClient.standalone(RedisURI.create(hostPort.substring(0, colon),
                Integer.parseInt(hostPort.substring(colon + 1))), null, null, RedisClientSettings.DEFAULT);
        Rmq rmq = Rmq.create(client.client(), RmqOptions.DEFAULT.withKeyPrefix(options.get("prefix")));
        String topic = options.get("topic");
        rmq.defineTopic(topic, TopicType.RANGE_MERGE, Integer.parseInt(options.getOrDefault("slots", "16")));
        System.out.println("INBOX " + rmq.replies().inboxId());
        var reply = rmq.replies().<String>request(OutgoingMessage.rangeMerge(topic, options.get("body"),
                Duration.ofMillis(1)), String.class, Duration.ofMillis(Long.parseLong(options.get("timeout-ms"))),
                false);
        System.out.println("SENT");
        System.out.flush();
        try {
            System.out.println("REPLY " + reply.join());
        }
        catch (RuntimeException ex) {
            System.out.println("FAILED " + ex.getCause());
        }
        System.out.flush();
        rmq.close();
        client.close();
    }
}
