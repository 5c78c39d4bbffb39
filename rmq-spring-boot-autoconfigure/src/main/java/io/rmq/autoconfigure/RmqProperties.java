package io.rmq.autoconfigure;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.rmq.consumer.ConsumerSettings;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.ConsumeMode;
import io.rmq.core.PayloadMapping;
import io.rmq.core.RateLimit;
import io.rmq.core.DeadLetterRetention;
import io.rmq.core.RetryPolicy;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import io.rmq.producer.MessageLimits;
import io.rmq.redis.RedisClientSettings;
import io.rmq.spring.RmqTransactionMode;
import io.lettuce.core.ClientOptions;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.jspecify.annotations.Nullable;

/**
 * Configuration of RMQ ({@code rmq.*}).
 *
 * @param enabled         Whether RMQ is auto-configured.
 * @param keyPrefix       Prefix of every Redis key RMQ writes, as in prefix:{topic:slot}:store.
 * @param maxBodySize     Largest serialized message body a send accepts.
 * @param topics          Topic definitions by name (type and slot amount), registered in Redis at start-up and checked
 *                        against definitions made elsewhere. A name with dots may be written as it is
 *                        (rmq.topics.orders.dlt.type) or in brackets (rmq.topics[orders.dlt].type).
 * @param consumer        Defaults of every @RmqListener (each may override them).
 * @param shutdownTimeout How long stopping a listener waits for running handlers to finish.
 * @param redis           RMQ's connection to Redis: its own Lettuce client (the default) or the application's,
 *                        and the own client's timeouts, reconnect and topology refresh.
 * @param listeners       Settings of individual @RmqListener containers by id (an annotation attribute, when set,
 *                        wins).
 * @param coordination    How ORDERLY listeners share out the slots of a topic among instances.
 * @param logBodies       Whether log lines show message bodies (their first 200 characters); off by default, since
 *                        bodies may hold personal data: lines then show topic, slot, attempt and the body's size.
 * @param startup         What start-up does when Redis cannot be reached.
 * @param metrics         RMQ's Micrometer meters (registered when the application has a MeterRegistry, e.g. with
 *                        Spring Boot Actuator).
 * @param observation     Micrometer Observations around sends and handler calls, and trace context propagation.
 * @param health          The rmq health indicator (Actuator): its Redis timeout, thresholds and cache.
 * @param dashboard       The operations web page (off by default).
 * @param maxIdSize       Longest message id a send accepts (UTF-8 bytes). The id is the message's identity for
 *                        merging, stored as the sorted-set member.
 * @param maxHeaderValueSize Longest value (and name) of one message header a send accepts (UTF-8 bytes).
 * @param maxHeaders      Most headers one message may carry (the sender's own: RMQ's rmq_dlt_* headers, the stored
 *                        group and the trace context do not count).
 * @param maxHeadersSize  Most bytes all header names and values of one message may take together (UTF-8; the sender's
 *                        own headers, counted as for max-headers).
 * @param producer        What RmqTemplate adds to the messages it sends.
 * @param template        What RmqTemplate's sends do inside Spring transactions.
 * @param history         The per-topic history (sent, handled, failed, dead per minute and per hour) each instance adds
 *                        to Redis, read by the dashboard and the rmq endpoint.
 * @param schedules       Periodic messages by schedule name, fired once per firing across every instance: each sends
 *                        its payload to its topic at every firing (@RmqScheduled methods are the other kind). A name
 *                        with dots goes in brackets: rmq.schedules[nightly.report].cron.
 * @param instances       The instance registry: each instance lists itself in Redis and honours the cluster-wide
 *                        pauses of listeners and topics.
 */
@ConfigurationProperties("rmq")
public record RmqProperties(@DefaultValue("true") boolean enabled, @DefaultValue("rmq") String keyPrefix,
        @DefaultValue("64KB") DataSize maxBodySize, Map<String, Topic> topics, @DefaultValue Consumer consumer,
        @DefaultValue("30s") Duration shutdownTimeout, @DefaultValue Redis redis, Map<String, Listener> listeners,
        @DefaultValue Coordination coordination, @DefaultValue Startup startup,
        @DefaultValue("false") boolean logBodies, @DefaultValue Metrics metrics,
        @DefaultValue Observation observation, @DefaultValue Health health, @DefaultValue Dashboard dashboard,
        @DefaultValue("256B") DataSize maxIdSize, @DefaultValue("1KB") DataSize maxHeaderValueSize,
        @DefaultValue("8KB") DataSize maxHeadersSize, @DefaultValue("32") int maxHeaders,
        @DefaultValue Producer producer, @DefaultValue Template template, Map<String, Schedule> schedules,
        @DefaultValue Instances instances, @DefaultValue History history) {

    /** The keys a {@code rmq.topics.<name>} entry takes, in their canonical (dashed) form. */
    public static final List<String> TOPIC_KEYS = List.of("type", "slot-amount", "rate-limit", "dead-letter-max-count",
            "dead-letter-max-age", "dead-letter-keep-expired", "expire-after", "dedupe-for");

    /**
     * Checks every value whose rule binding cannot express (binding already rejects what does not convert), so that
     * bad properties fail start-up before RMQ connects to Redis, with the property, the value and the rule named.
     */
    public RmqProperties {
        topics = topics == null ? Map.of() : Map.copyOf(topics);
        listeners = listeners == null ? Map.of() : Map.copyOf(listeners);
        schedules = schedules == null ? Map.of() : Map.copyOf(schedules);
        long maxBody = maxBodySize.toBytes();
        if (maxBody < 1 || maxBody > Integer.MAX_VALUE) {
            throw new RmqInvalidArgumentException("rmq.max-body-size", maxBodySize, "must be between 1B and 512MB");
        }
        checkLimit("rmq.max-id-size", maxIdSize);
        checkLimit("rmq.max-header-value-size", maxHeaderValueSize);
        checkLimit("rmq.max-headers-size", maxHeadersSize);
        if (maxHeaders < 1 || maxHeaders > MAX_LIMIT_BYTES) {
            throw new RmqInvalidArgumentException("rmq.max-headers", maxHeaders, "must be between 1 and " + MAX_LIMIT_BYTES);
        }
        // the topic entries are checked when RMQ reads them (TopicEntries): a name with dots written without
        // brackets binds here as a nested key of another entry, so only the environment tells what is what
    }

    /** The largest id and header limit {@link MessageLimits} takes. */
    private static final int MAX_LIMIT_BYTES = 64 * 1024 * 1024;

    private static void checkLimit(String property, DataSize size) {
        if (size.toBytes() < 1 || size.toBytes() > MAX_LIMIT_BYTES) {
            throw new RmqInvalidArgumentException(property, size, "must be between 1B and 64MB");
        }
    }

    /** The id and header limits the engine checks every send against. */
    public MessageLimits messageLimits() {
        return new MessageLimits((int) maxIdSize.toBytes(), (int) maxHeaderValueSize.toBytes(),
                (int) maxHeadersSize.toBytes(), maxHeaders);
    }

    /**
     * RmqTemplate's sends.
     *
     * @param typeHeader Whether RmqTemplate adds the __TypeId__ header (the payload's class name, Spring's convention)
     *                   to each message that has none, so a class-level @RmqListener gives it to the @RmqHandler of
     *                   that type without trying its body against the others. Costs the header's bytes per waiting
     *                   message; String and byte[] payloads get none.
     */
    public record Producer(@DefaultValue("false") boolean typeHeader) {
    }

    /**
     * RmqTemplate inside Spring transactions.
     *
     * @param transactionMode What a send made inside a Spring transaction does: after-commit holds it until the
     *                        transaction commits and drops it when it rolls back (checked when made; the commit waits
     *                        for the writes of synchronous sends); immediate writes it at once, as outside a
     *                        transaction. RmqTemplate.immediate() writes at once whatever the mode.
     */
    public record Template(@DefaultValue("after-commit") RmqTransactionMode transactionMode) {
    }

    /**
     * A periodic message: at each firing, one instance sends the payload to the topic (see docs/scheduling.md).
     *
     * @param cron             When it fires: a Spring cron expression of six fields (second minute hour day-of-month
     *                         month day-of-week), e.g. "0 0/5 * * * *", or a macro such as @hourly. Set this or
     *                         fixed-rate.
     * @param zone             The time zone the cron expression is read in, e.g. Europe/Paris; default: the JVM's.
     * @param fixedRate        When it fires: every this long (at least 1s), on multiples of it since the epoch. Set
     *                         this or cron.
     * @param topic            The topic each firing sends the payload to (defined by rmq.topics or a listener); with
     *                         the firing's id, schedule name and firing time, e.g. report@2026-11-27T10:05:00Z.
     * @param payload          What each firing sends (a String, stored as it is: JSON text for a listener that takes
     *                         an object); default: the firing time in ISO-8601.
     * @param misfire          What happens to firings missed while every instance was down: fire-once (the latest
     *                         missed firing runs once, late) or skip (missed firings are dropped).
     * @param misfireThreshold How late a firing may be taken and still count as on time; a later one is missed.
     */
    public record Schedule(@Nullable String cron, @Nullable String zone, @Nullable Duration fixedRate,
            @Nullable String topic, @Nullable String payload,
            @DefaultValue("fire-once") io.rmq.spring.schedule.MisfirePolicy misfire,
            @DefaultValue("5s") Duration misfireThreshold) {
    }

    /** Checks one topic entry (see {@link TopicEntries}). */
    static void check(String name, Topic topic) {
        try {
            TopicDefinition.validateName(name);
        }
        catch (RmqInvalidArgumentException ex) {
            throw new RmqInvalidArgumentException("topic name in rmq.topics", name, ex.getRule()
                    + "; a name with other characters must also be written in brackets, e.g. rmq.topics[a.b].type");
        }
        String property = "rmq.topics." + name;
        if (topic.type() == null) {
            throw new RmqInvalidArgumentException(property + ".type", null, "must be set, to one of "
                    + Arrays.stream(TopicType.values()).map(Enum::name).collect(Collectors.joining(", ")));
        }
        int slots = topic.slotAmount();
        if (slots < 1 || slots > TopicDefinition.MAX_SLOT_AMOUNT || Integer.bitCount(slots) != 1) {
            throw new RmqInvalidArgumentException(property + ".slot-amount", slots,
                    "must be a power of two between 1 and " + TopicDefinition.MAX_SLOT_AMOUNT);
        }
        try {
            RateLimit.parse(topic.rateLimit());
        }
        catch (RmqInvalidArgumentException ex) {
            throw new RmqInvalidArgumentException(property + ".rate-limit", ex.getValue(), ex.getRule());
        }
        checkDeadLetters(property + ".dead-letter-max-count", topic.deadLetterMaxCount(),
                property + ".dead-letter-max-age", topic.deadLetterMaxAge());
        Duration expireAfter = topic.expireAfter();
        if (expireAfter != null && (expireAfter.toMillis() < 1
                || expireAfter.compareTo(Duration.ofMillis(io.rmq.producer.OutgoingMessage.MAX_EXPIRES_AFTER_MILLIS)) > 0)) {
            throw new RmqInvalidArgumentException(property + ".expire-after", expireAfter,
                    "must be between 1ms and 2^52 ms (unset: messages do not expire)");
        }
        Duration dedupeFor = topic.dedupeFor();
        if (dedupeFor != null && (dedupeFor.compareTo(io.rmq.producer.OutgoingMessage.MAX_DEDUPE_FOR) > 0
                || dedupeFor.toMillis() < 1)) {
            throw new RmqInvalidArgumentException(property + ".dedupe-for", dedupeFor, "must be between 1ms and "
                    + io.rmq.producer.OutgoingMessage.MAX_DEDUPE_FOR.toDays() + "d (unset: no deduplication window)");
        }
    }

    /** A dead-letter bound that is set must be zero (no bound) or positive; named by its property. */
    static void checkDeadLetters(String countProperty, @Nullable Long count, String ageProperty, @Nullable Duration age) {
        if (count != null && count < 0) {
            throw new RmqInvalidArgumentException(countProperty, count, "must be zero (keep every dead message) or"
                    + " positive");
        }
        if (age != null && age.isNegative()) {
            throw new RmqInvalidArgumentException(ageProperty, age, "must be zero (keep dead messages however old) or"
                    + " positive");
        }
    }

    /**
     * The dashboard: one page with topics, listeners, dead and waiting messages, served by the application (Servlet
     * or Reactive) at {@code path}, with its JSON under {@code path/api}.
     *
     * @param enabled  Whether the application serves the dashboard; when false nothing is served at its path.
     * @param path     Where the page is served, e.g. /rmq (its JSON under /rmq/api).
     * @param readOnly Whether the page only shows; when false it also requeues, deletes and purges dead messages,
     *                 cancels and reschedules waiting ones and pauses and resumes listeners (POSTs, CSRF-protected
     *                 when Spring Security is present; refused with 403 while read-only).
     * @param showBodies Whether the views of messages waiting for a retry or in flight (page and rmq endpoint) show
     *                   body text; off: they show a message's id and handle only (bodies may hold personal data).
     */
    public record Dashboard(@DefaultValue("false") boolean enabled, @DefaultValue("/rmq") String path,
            @DefaultValue("true") boolean readOnly, @DefaultValue("false") boolean showBodies) {

        public Dashboard {
            if (path == null || !path.matches("(/[A-Za-z0-9._~-]+)+")) {
                throw new RmqInvalidArgumentException("rmq.dashboard.path", path, "must start with / and be made of"
                        + " path segments of letters, digits, '.', '_', '~' and '-', without a trailing /");
            }
        }
    }

    /**
     * The instance registry (see docs/operations.md, "Instances and cluster-wide pause").
     *
     * @param enabled   Whether this instance lists itself in Redis (application name, host, pid, listeners, busy
     *                  handlers) and honours cluster-wide pauses; when false it is not listed and a cluster-wide pause
     *                  does not stop its listeners.
     * @param heartbeat How often the instance renews its entry and reads the cluster-wide pauses (one script call
     *                  each time): a pause takes effect on every instance within about one heartbeat, and an instance
     *                  that stops beating is dropped after three.
     */
    public record Instances(@DefaultValue("true") boolean enabled, @DefaultValue("5s") Duration heartbeat) {

        public Instances {
            if (heartbeat != null && (heartbeat.toMillis() < 100 || heartbeat.compareTo(Duration.ofMinutes(5)) > 0)) {
                throw new RmqInvalidArgumentException("rmq.instances.heartbeat", heartbeat, "must be between 100 ms"
                        + " and 5 minutes");
            }
        }
    }

    /**
     * The history of each topic: every instance counts what it sends, handles, fails and buries, and adds its counts to
     * Redis once per flush interval (one script call for all topics, none when it counted nothing).
     *
     * @param enabled       Whether this instance counts and writes history (reading it works either way).
     * @param flushInterval How often the counts are added to Redis: they are filed under the minute and hour of that
     *                      write (Redis's clock), so a count lands up to this long after it happened.
     */
    public record History(@DefaultValue("true") boolean enabled, @DefaultValue("10s") Duration flushInterval) {

        public History {
            if (flushInterval != null && flushInterval.toMillis() < 10) {
                throw new RmqInvalidArgumentException("rmq.history.flush-interval", flushInterval,
                        "must be at least 10ms");
            }
        }

        /** The engine's flush interval: zero when the history is off. */
        public Duration engineInterval() {
            return enabled ? flushInterval : Duration.ZERO;
        }
    }

    /**
     * The rmq health indicator ({@code management.health.rmq.enabled} turns it off).
     *
     * @param deadThreshold      Dead messages a topic may hold before the health reports the threshold status; unset:
     *                           no threshold.
     * @param oldestDueThreshold How long a due message may have waited (now minus the oldest due time of a
     *                           RANGE_MERGE or FIXED_TIME topic) before the health reports the threshold status;
     *                           unset: no threshold.
     * @param thresholdStatus    The status reported when a threshold is exceeded (UP, OUT_OF_SERVICE, DOWN, or a
     *                           custom code listed in management.endpoint.health.status.order); the details name the
     *                           threshold either way.
     * @param timeout            How long the check waits for Redis (the PING and the queue figures) before it reports
     *                           DOWN.
     * @param cacheTimeToLive    How long a result is reused: health requests in between cost Redis nothing.
     */
    public record Health(Long deadThreshold, Duration oldestDueThreshold, @DefaultValue("UP") String thresholdStatus,
            @DefaultValue("2s") Duration timeout, @DefaultValue("1s") Duration cacheTimeToLive) {
    }

    /**
     * Start-up.
     *
     * @param failFast Whether start-up fails when Redis cannot be reached (a one-screen report). When false, the
     *                 application starts anyway: RMQ keeps trying to connect (backing off up to 5s, one log line per
     *                 outage), registers rmq.topics once connected, listeners begin consuming by themselves, and
     *                 sends fail at once with RmqUnavailableException until then.
     */
    public record Startup(@DefaultValue("false") boolean failFast) {
    }

    /**
     * RMQ's Micrometer meters.
     *
     * @param enabled            Whether RMQ registers its meters (messaging.*, rmq.*) when the application has a
     *                           MeterRegistry.
     * @param queueSizesInterval How often the rmq.messages gauges read the queue sizes from Redis, shared by the
     *                           fleet: each topic is read by one instance per interval and the others take its
     *                           figures; scrapes read the last values.
     */
    public record Metrics(@DefaultValue("true") boolean enabled, @DefaultValue("30s") Duration queueSizesInterval) {

        public Metrics {
            if (queueSizesInterval != null && queueSizesInterval.toMillis() < 100) {
                throw new RmqInvalidArgumentException("rmq.metrics.queue-sizes-interval", queueSizesInterval,
                        "must be at least 100ms");
            }
        }
    }

    /**
     * Observations (when an ObservationRegistry exists).
     *
     * @param enabled            Whether sends and handler calls are observed (rmq.send and rmq.process observations,
     *                           so spans and timers appear wherever the application set tracing and metrics up).
     *                           Off by default, as in Spring Kafka: an observation per send and per handler call
     *                           costs several microseconds each.
     * @param propagateContext   Whether a send of a sampled trace stores its trace context with the message in Redis
     *                           (as its traceparent and tracestate headers), and listeners read it back, so the
     *                           handler's span continues the sender's trace however late it runs. An unsampled
     *                           send stores nothing and its listener starts a trace of its own (see
     *                           rmq.observation.propagate-unsampled). Needs rmq.observation.enabled. Costs the
     *                           context's bytes per waiting message.
     * @param propagateUnsampled Whether sends of unsampled traces store their trace context too, so every handler's
     *                           span links to its sender whatever the sampler decided. Needs
     *                           rmq.observation.propagate-context. Costs the context's bytes on every message.
     */
    public record Observation(@DefaultValue("false") boolean enabled, @DefaultValue("false") boolean propagateContext,
            @DefaultValue("false") boolean propagateUnsampled) {
    }

    /**
     * One listener's settings.
     *
     * @param mode CONCURRENT or ORDERLY (each slot owned by one instance and handled by one thread, in order).
     */
    public record Listener(ConsumeMode mode) {
    }

    /**
     * Coordination of ORDERLY listeners. By default in Redis (membership heartbeats and slot ownership under the
     * topic's keys); with rmq.coordination.zookeeper.connect-string set, through ZooKeeper (needs
     * org.apache.curator:curator-framework on the class path).
     *
     * @param ownershipTimeout How long an instance that stops renewing (died, paused, cut off) keeps its slots before
     *                         the others take them over; it renews every fifth of it. With ZooKeeper, an owner stops
     *                         starting handlers by the shorter of this and the session timeout. CONCURRENT listeners:
     *                         how long a dead instance keeps its preferred share of the slots (they heartbeat every
     *                         half of it; the others steal from its slots meanwhile).
     * @param zookeeper        The ZooKeeper coordinator.
     */
    public record Coordination(@DefaultValue("5s") Duration ownershipTimeout, @DefaultValue ZooKeeper zookeeper) {
    }

    /**
     * ZooKeeper coordination (the original RMQ design's): consumer instances and slot owners as ephemeral nodes.
     *
     * @param connectString     ZooKeeper servers, e.g. zk1:2181,zk2:2181; empty: coordinate in Redis.
     * @param root              Path under which RMQ keeps its nodes.
     * @param sessionTimeout    ZooKeeper session timeout: how long a dead instance keeps its slots (the take-over
     *                          follows it, not the ownership timeout); safe with any ownership timeout.
     * @param connectionTimeout How long to wait for a connection to ZooKeeper.
     */
    public record ZooKeeper(String connectString, @DefaultValue("/rmq") String root,
            @DefaultValue("5s") Duration sessionTimeout, @DefaultValue("5s") Duration connectionTimeout) {
    }

    /**
     * RMQ's connection to Redis.
     *
     * @param connection           Which Lettuce client RMQ talks to Redis through. own: a client of RMQ's own, built
     *                             from the application's Redis connection details (spring.data.redis.*, SSL bundles,
     *                             Sentinel, Cluster, service connections) and sharing its client resources, with the
     *                             settings below; the application's client stays as the application configured it.
     *                             application: the client of the application's LettuceConnectionFactory, as the
     *                             application configured it (the settings below then do not apply).
     * @param connectTimeout       Longest a connection attempt of RMQ's client may take.
     * @param commandTimeout       Longest any command of RMQ's client waits for its reply before it is cancelled
     *                             (sends and acks give up after 5s, listeners after rmq.consumer.command-timeout).
     * @param reconnectDelayMax    Longest wait between two reconnect attempts of RMQ's client (they start at 50ms and
     *                             double); 0: Lettuce's default (up to 30s).
     * @param disconnectedBehavior What a command does while the connection it needs (its node's, on a cluster) is
     *                             down: reject-commands fails it at once (a send to a dead master's slot throws
     *                             RmqUnavailableException naming the topic and slot, instead of waiting seconds);
     *                             accept-commands queues it until the connection is back or command-timeout passes.
     * @param topologyRefreshPeriod Cluster: how often RMQ's client reads the topology again, besides the refreshes that
     *                             redirects and reconnect attempts trigger (at most one a second).
     * @param keepAliveIdle        TCP keep-alive of RMQ's connections: idle time before the first probe (0: keep-alive
     *                             off). A dead peer of an idle connection is found within idle + interval x count.
     * @param keepAliveInterval    TCP keep-alive: time between two probes.
     * @param keepAliveCount       TCP keep-alive: unanswered probes after which the kernel drops the connection.
     * @param tcpUserTimeout       TCP_USER_TIMEOUT: longest sent data may stay unacknowledged before the kernel drops
     *                             the connection (0: the kernel's default, up to ~15 minutes). Needs a native
     *                             transport (netty-transport-native-epoll or io_uring on the class path).
     * @param silenceTimeout       A connection of RMQ's client that owes replies and has received nothing for this
     *                             long is closed and replaced (0: off). Finds a link that died without a reset
     *                             whatever the transport, also behind a relay that still acknowledges the bytes.
     */
    public record Redis(@DefaultValue("own") Connection connection, @DefaultValue("5s") Duration connectTimeout,
            @DefaultValue("10s") Duration commandTimeout, @DefaultValue("1s") Duration reconnectDelayMax,
            @DefaultValue("reject-commands") ClientOptions.DisconnectedBehavior disconnectedBehavior,
            @DefaultValue("5s") Duration topologyRefreshPeriod, @DefaultValue("15s") Duration keepAliveIdle,
            @DefaultValue("5s") Duration keepAliveInterval, @DefaultValue("3") int keepAliveCount,
            @DefaultValue("0") Duration tcpUserTimeout, @DefaultValue("10s") Duration silenceTimeout) {

        /** Lettuce's own cap of the reconnect delay, for {@code reconnect-delay-max=0}. */
        static final Duration LETTUCE_RECONNECT_DELAY_MAX = Duration.ofSeconds(30);

        public Redis {
            positive("rmq.redis.connect-timeout", connectTimeout);
            positive("rmq.redis.command-timeout", commandTimeout);
            positive("rmq.redis.topology-refresh-period", topologyRefreshPeriod);
            notNegative("rmq.redis.keep-alive-idle", keepAliveIdle);
            positive("rmq.redis.keep-alive-interval", keepAliveInterval);
            if (keepAliveCount < 1) {
                throw new RmqInvalidArgumentException("rmq.redis.keep-alive-count", keepAliveCount, "must be at least 1");
            }
            notNegative("rmq.redis.tcp-user-timeout", tcpUserTimeout);
            notNegative("rmq.redis.silence-timeout", silenceTimeout);
            if (reconnectDelayMax.isNegative()) {
                throw new RmqInvalidArgumentException("rmq.redis.reconnect-delay-max", reconnectDelayMax,
                        "must be positive, or 0 for Lettuce's default");
            }
        }

        private static void positive(String property, Duration value) {
            if (value.isNegative() || value.isZero()) {
                throw new RmqInvalidArgumentException(property, value, "must be positive");
            }
        }

        private static void notNegative(String property, Duration value) {
            if (value.isNegative()) {
                throw new RmqInvalidArgumentException(property, value, "must be 0 or positive");
            }
        }

        /** The settings of RMQ's own client. */
        public RedisClientSettings settings() {
            return new RedisClientSettings(connectTimeout, commandTimeout,
                    reconnectDelayMax.isZero() ? LETTUCE_RECONNECT_DELAY_MAX : reconnectDelayMax,
                    disconnectedBehavior, topologyRefreshPeriod, new RedisClientSettings.ConnectionHealth(keepAliveIdle,
                            keepAliveInterval, keepAliveCount, tcpUserTimeout, silenceTimeout));
        }
    }

    /** Which Lettuce client RMQ talks to Redis through. */
    public enum Connection {

        /** A client of RMQ's own, built from the application's Redis connection details. */
        OWN,

        /** The client of the application's LettuceConnectionFactory, as the application configured it. */
        APPLICATION
    }

    /**
     * One topic definition.
     *
     * @param type       What the score means: RANGE_MERGE, PRIORITY or FIXED_TIME.
     * @param slotAmount How many sorted sets the topic is split into (a power of two).
     * @param rateLimit  Most messages all consumers of the topic together handle, cluster-wide (enforced in
     *                   Redis), e.g. 500/s, 3000/m or 50/100ms; empty: no limit.
     * @param deadLetterMaxCount Most dead messages the topic keeps (0: all); unset:
     *                   rmq.consumer.dead-letter-max-count. When a message dies, the oldest beyond it are deleted.
     * @param deadLetterMaxAge Longest a dead message of the topic is kept (0: for ever); unset:
     *                   rmq.consumer.dead-letter-max-age. When a message dies, older ones are deleted.
     * @param deadLetterKeepExpired Whether the topic's messages that expire before they are handled go to the dead
     *                   queue (reason "expired at ...") instead of being dropped; unset:
     *                   rmq.consumer.dead-letter-keep-expired.
     * @param expireAfter How long after it is stored a message sent to the topic with RmqTemplate expires, unless it
     *                   sets an expiry of its own (e.g. 10m); unset: messages do not expire. A message past its
     *                   expiry is never handed to a handler.
     * @param dedupeFor  The deduplication window of a message sent to the topic with RmqTemplate, unless it sets one of
     *                   its own (e.g. 10m): once a message of an identity (its id, or its body) was handled, sends of
     *                   that identity are dropped until the window has passed; unset: none.
     */
    public record Topic(@Nullable TopicType type, @DefaultValue("16") int slotAmount, @Nullable String rateLimit,
            @Nullable Long deadLetterMaxCount, @Nullable Duration deadLetterMaxAge,
            @Nullable Boolean deadLetterKeepExpired, @Nullable Duration expireAfter, @Nullable Duration dedupeFor) {

        /** The topic's dead-letter retention: its own bounds where set, else {@code defaults}'. */
        public DeadLetterRetention deadLetters(DeadLetterRetention defaults) {
            return new DeadLetterRetention(deadLetterMaxCount != null ? deadLetterMaxCount : defaults.maxCount(),
                    deadLetterMaxAge != null ? deadLetterMaxAge : defaults.maxAge(),
                    deadLetterKeepExpired != null ? deadLetterKeepExpired : defaults.keepExpired());
        }
    }

    /**
     * Listener defaults.
     *
     * @param concurrency Handler threads per listener.
     * @param batchSize   Most messages popped from one slot in one call.
     * @param lease       How long a popped message stays reserved; extended while its handler runs.
     * @param maxRetries  Retries after the first attempt; the failure after the last one moves the message to the
     *                    dead queue.
     * @param backoff     Wait before each retry.
     * @param deadLetterMaxCount Most dead messages a topic keeps (0: all); when a message dies, the oldest beyond it
     *                    are deleted with it (each of the topic's slots keeps its share, rounded up). A topic's own
     *                    rmq.topics.<name>.dead-letter-max-count wins.
     * @param deadLetterMaxAge Longest a dead message is kept (0: for ever); when a message dies, dead messages older
     *                    than this are deleted. A topic's own rmq.topics.<name>.dead-letter-max-age wins.
     * @param deadLetterKeepExpired Whether messages that expire before they are handled go to the dead queue (reason
     *                    "expired at ...") instead of being dropped. A topic's own
     *                    rmq.topics.<name>.dead-letter-keep-expired wins.
     * @param maxIdle     Longest an idle listener sleeps before checking every slot again (one EXISTS; slots that
     *                    hold anything are popped); new messages normally wake it at once.
     * @param commandTimeout Longest a listener waits for a Redis reply (a pop, a lease extension) before it gives up
     *                    on it and polls again; what that call leased comes back through lease expiry.
     * @param lookAhead   FIXED_TIME and RANGE_MERGE topics, CONCURRENT listeners: how long before its due time a
     *                    message may be popped, e.g. 10ms (0, the default: popped once due). The listener holds a
     *                    message popped ahead and calls the handler not before its due time, so the pop's round trip
     *                    under load does not make it late; but a message leaves the store that early: a duplicate
     *                    sent in that window is delivered separately instead of merging, a later FIXED_TIME no longer
     *                    postpones it, and a cancel finds it in flight. At most 1s and a third of the lease; PRIORITY
     *                    topics and ORDERLY listeners ignore it.
     * @param payloadMapping How every listener reads a body as its payload type. strict (the default): a body that
     *                    lacks a required property of the type (a record component or creator parameter, a bean
     *                    property left null; not Optional or @Nullable ones) or has one of the wrong shape is not
     *                    handled: it goes to the dead queue at once, its reason naming the type and the property.
     *                    lenient: the application's JsonMapper as it is (Spring Boot's reads a missing property as
     *                    null). Unknown properties are accepted either way, unless the mapper rejects them.
     */
    public record Consumer(@DefaultValue("1") int concurrency, @DefaultValue("64") int batchSize,
            @DefaultValue("30s") Duration lease, @DefaultValue("16") int maxRetries, @DefaultValue Backoff backoff,
            @DefaultValue("30s") Duration maxIdle, @DefaultValue("10s") Duration commandTimeout,
            @DefaultValue("0ms") Duration lookAhead, @DefaultValue("strict") PayloadMapping payloadMapping,
            @DefaultValue("10000") long deadLetterMaxCount, @DefaultValue("30d") Duration deadLetterMaxAge,
            @DefaultValue("false") boolean deadLetterKeepExpired) {

        public Consumer {
            checkDeadLetters("rmq.consumer.dead-letter-max-count", deadLetterMaxCount,
                    "rmq.consumer.dead-letter-max-age", deadLetterMaxAge);
        }

        public RetryPolicy retryPolicy() {
            return new RetryPolicy(maxRetries, backoff.policy(), deadLetters());
        }

        /** The dead-letter retention of topics that set none of their own. */
        public DeadLetterRetention deadLetters() {
            return new DeadLetterRetention(deadLetterMaxCount, deadLetterMaxAge, deadLetterKeepExpired);
        }

        /** The listener defaults as engine settings; a bad value fails naming its property. */
        public ConsumerSettings settings() {
            ConsumerSettings settings = new ConsumerSettings(batchSize, lease, retryPolicy());
            try {
                return settings.withLookAhead(lookAhead);
            }
            catch (RmqInvalidArgumentException ex) {
                throw new RmqInvalidArgumentException("rmq.consumer.look-ahead", ex.getValue(), ex.getRule());
            }
        }
    }

    /**
     * Retry backoff: {@code min(max, initial * multiplier^(failures-1))}, shortened by a random fraction up to
     * {@code jitter}.
     *
     * @param initial    Delay after the first failure.
     * @param multiplier Growth per further failure (1 = fixed delay).
     * @param max        Longest delay.
     * @param jitter     Fraction (0 to 1) by which delays are randomly shortened.
     */
    public record Backoff(@DefaultValue("1s") Duration initial, @DefaultValue("2.0") double multiplier,
            @DefaultValue("10m") Duration max, @DefaultValue("0.2") double jitter) {

        public BackoffPolicy policy() {
            return new BackoffPolicy(initial, multiplier, max, jitter);
        }
    }
}
