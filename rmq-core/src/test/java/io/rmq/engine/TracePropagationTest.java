package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelBaggageManager;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelPropagator;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.extension.trace.propagation.B3Propagator;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.opentelemetry.sdk.trace.samplers.SamplingResult;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.Delivery;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.TopicType;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.micrometer.observation.ObservationInstrumentation;
import io.rmq.producer.OutgoingMessage;
import io.rmq.redis.internal.Envelope;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static io.rmq.internal.RmqInternals.redis;
import static org.awaitility.Awaitility.await;

/**
 * A real tracer (OpenTelemetry SDK through Micrometer Tracing's bridge, spans exported to memory) shows what the
 * stored trace context is for: a message sent inside a span and handled seconds later, by a listener that knows
 * nothing of the sender, is handled in the sender's trace, as a child of the send span — with propagation on, and
 * only then. Merged sends link to the sender the merge rules name. Only sampled traces' contexts are stored: the
 * tracer's sampler drops the requests that {@link #sendUnsampled} serves (and, parent-based, their send spans), and
 * their sends leave nothing in Redis but the message, unless every context is to be stored.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class TracePropagationTest extends EngineTestSupport {

    TracePropagationTest(RedisTopology topology) {
        super(topology);
    }

    /** How long after the send the messages fall due: the context must survive a wait in Redis. */
    private static final Duration DELAY = Duration.ofSeconds(2);

    private final InMemorySpanExporter spans = InMemorySpanExporter.create();
    private SdkTracerProvider tracerProvider;
    private ObservationRegistry registry;
    private final List<Rmq> engines = new java.util.ArrayList<>();
    private final List<ListenerContainer> containers = new java.util.ArrayList<>();
    /** Trace id seen on the handler thread, per body. */
    private final Map<String, String> handlerTraceIds = new ConcurrentHashMap<>();
    private final Map<String, Instant> handledAt = new ConcurrentHashMap<>();

    @BeforeEach
    void tracer() {
        tracer(W3CTraceContextPropagator.getInstance());
    }

    /** Whether the sampler samples a new root span (a request, or a handler's span without a stored context). */
    private volatile boolean sampleRoots = true;

    /**
     * The tracer, writing and reading contexts in the propagator's format. Its sampler is parent-based (as Boot's):
     * a root span is sampled as {@link #sampleRoots} says; a child follows its parent.
     */
    private void tracer(TextMapPropagator format) {
        // the replaced provider stays open: closing it would shut the exporter down that the new one shares
        Sampler roots = new Sampler() {
            @Override
            public SamplingResult shouldSample(Context parentContext, String traceId, String name, SpanKind spanKind,
                    Attributes attributes, List<LinkData> parentLinks) {
                return sampleRoots ? SamplingResult.recordAndSample() : SamplingResult.drop();
            }

            @Override
            public String getDescription() {
                return "roots as sampleRoots says";
            }
        };
        tracerProvider = SdkTracerProvider.builder().setSampler(Sampler.parentBased(roots))
                .addSpanProcessor(SimpleSpanProcessor.create(spans)).build();
        OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(tracerProvider)
                .setPropagators(ContextPropagators.create(format)).build();
        io.opentelemetry.api.trace.Tracer otelTracer = sdk.getTracer("rmq-test");
        OtelCurrentTraceContext current = new OtelCurrentTraceContext();
        OtelTracer tracer = new OtelTracer(otelTracer, current, event -> { },
                new OtelBaggageManager(current, List.of(), List.of()));
        OtelPropagator propagator = new OtelPropagator(sdk.getPropagators(), otelTracer);
        registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new ObservationHandler.FirstMatchingCompositeObservationHandler(
                new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
                new PropagatingReceiverTracingObservationHandler<>(tracer, propagator),
                new DefaultTracingObservationHandler(tracer)));
        // what the handler sees as its current trace
        this.tracer = tracer;
    }

    private OtelTracer tracer;

    @AfterEach
    void close() {
        containers.forEach(ListenerContainer::stop);
        engines.forEach(Rmq::close);
        tracerProvider.close();
    }

    /** An engine observed by the tracer, with propagation on or off (senders and listeners alike). */
    private Rmq engine(boolean propagate) {
        return engine(new ObservationInstrumentation(registry, propagate, null, null), propagate);
    }

    /** An engine that stores every context it is given, sampled or not. */
    private Rmq engineStoringUnsampled() {
        return engine(new ObservationInstrumentation(registry, true, true, null, null), true);
    }

    private Rmq engine(ObservationInstrumentation instrumentation, boolean propagate) {
        Rmq engine = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix)
                .withInstrumentation(instrumentation).withPropagateContext(propagate));
        engines.add(engine);
        return engine;
    }

    /** Compact trace records and envelopes in the topic's slots: what the sends stored beside their messages. */
    private Stored stored(Rmq engine, String topic, int slots) {
        long traceRecords = 0;
        long envelopes = 0;
        long waiting = 0;
        List<Map<String, String>> envelopeHeaders = new java.util.ArrayList<>();
        for (int i = 0; i < slots; i++) {
            SlotKeys slot = redis(engine).keys().slot(topic, i);
            traceRecords += raw(c -> c.hlen(slot.trace()));
            envelopes += raw(c -> c.hlen(slot.msg()));
            waiting += raw(c -> c.zcard(slot.store()));
            for (byte[] envelope : raw(c -> c.hvals(slot.msg()))) {
                envelopeHeaders.add(Envelope.decode(envelope).headers());
            }
        }
        return new Stored(waiting, traceRecords, envelopes, envelopeHeaders);
    }

    private record Stored(long waiting, long traceRecords, long envelopes, List<Map<String, String>> envelopeHeaders) {
    }

    private void listen(Rmq engine, String topic) {
        ListenerContainer container = engine.container(topic, FAST, String.class, (String body, Delivery delivery) -> {
            handledAt.put(body, Instant.now());
            io.micrometer.tracing.Span span = tracer.currentSpan();
            handlerTraceIds.put(body, span == null ? "none" : span.context().traceId());
        }, new ContainerOptions("l-" + topic, 1, Duration.ofSeconds(1), Duration.ofSeconds(5), null));
        containers.add(container);
        container.start();
    }

    /** Sends inside a span of its own (a request being served) and returns that span's trace id. */
    private String sendInSpan(Rmq engine, String name, OutgoingMessage message) {
        String[] traceId = new String[1];
        Observation.createNotStarted(name, registry).observe(() -> {
            traceId[0] = tracer.currentSpan().context().traceId();
            engine.producer().send(message);
        });
        return traceId[0];
    }

    /** Sends inside a span of its own that the sampler drops, and returns that span's trace id. */
    private String sendUnsampled(Rmq engine, OutgoingMessage message) {
        sampleRoots = false;
        try {
            return sendInSpan(engine, "unsampled request", message);
        }
        finally {
            sampleRoots = true;
        }
    }

    private SpanData span(String name, String traceId) {
        return spans.getFinishedSpanItems().stream()
                .filter(s -> s.getName().equals(name) && s.getTraceId().equals(traceId))
                .findFirst().orElseThrow(() -> new AssertionError("no span '" + name + "' in trace " + traceId + ": "
                        + spans.getFinishedSpanItems()));
    }

    private SpanData processSpanOf(String body) {
        String traceId = handlerTraceIds.get(body);
        return spans.getFinishedSpanItems().stream()
                .filter(s -> s.getKind() == SpanKind.CONSUMER && s.getTraceId().equals(traceId))
                .findFirst().orElseThrow(() -> new AssertionError("no process span in " + spans.getFinishedSpanItems()));
    }

    @Test
    void withPropagationTheDelayedHandlerContinuesTheSendersTraceAsAChildOfTheSendSpan() {
        Rmq engine = engine(true);
        engine.defineTopic("reminders", TopicType.FIXED_TIME, 4);
        listen(engine, "reminders");
        Instant due = Instant.now().plus(DELAY);
        String body = "{\"remind\":1}";
        String requestTrace = sendInSpan(engine, "request", OutgoingMessage.fixedTime("reminders", body, due));

        await().atMost(Duration.ofSeconds(30)).until(() -> handlerTraceIds.containsKey(body)
                && spans.getFinishedSpanItems().stream().anyMatch(s -> s.getKind() == SpanKind.CONSUMER));
        assertThat(handledAt.get(body)).as("handled after its due time, seconds after the send")
                .isAfterOrEqualTo(due.minusMillis(50));
        SpanData send = span("send reminders", requestTrace);
        assertThat(send.getKind()).isEqualTo(SpanKind.PRODUCER);
        SpanData process = processSpanOf(body);
        assertThat(process.getName()).isEqualTo("process reminders");
        assertThat(handlerTraceIds.get(body)).as("the handler runs in the sender's trace").isEqualTo(requestTrace);
        assertThat(process.getTraceId()).isEqualTo(requestTrace);
        assertThat(process.getParentSpanId()).as("a child of the send span").isEqualTo(send.getSpanId());
        assertThat(process.getStartEpochNanos() - send.getEndEpochNanos())
                .as("the wait in Redis lies between send and process").isGreaterThanOrEqualTo(DELAY.toNanos() / 2);
    }

    @Test
    void withoutPropagationTheHandlerStartsATraceOfItsOwn() {
        Rmq engine = engine(false);
        engine.defineTopic("reminders", TopicType.FIXED_TIME, 4);
        listen(engine, "reminders");
        String body = "{\"remind\":2}";
        String requestTrace = sendInSpan(engine, "request",
                OutgoingMessage.fixedTime("reminders", body, Instant.now().plus(DELAY)));

        await().atMost(Duration.ofSeconds(30)).until(() -> handlerTraceIds.containsKey(body)
                && spans.getFinishedSpanItems().stream().anyMatch(s -> s.getKind() == SpanKind.CONSUMER));
        assertThat(span("send reminders", requestTrace).getKind()).isEqualTo(SpanKind.PRODUCER);
        SpanData process = processSpanOf(body);
        assertThat(process.getTraceId()).isNotEqualTo(requestTrace);
        assertThat(handlerTraceIds.get(body)).isNotEqualTo(requestTrace);
        assertThat(spans.getFinishedSpanItems()).filteredOn(s -> s.getKind() == SpanKind.CONSUMER)
                .allSatisfy(s -> assertThat(s.getTraceId()).isNotEqualTo(requestTrace));
    }

    @Test
    void mergedSendsLinkToTheSenderTheMergeRulesName() {
        Rmq engine = engine(true);
        engine.defineTopic("fixed", TopicType.FIXED_TIME, 4);
        engine.defineTopic("ranged", TopicType.RANGE_MERGE, 4);
        listen(engine, "fixed");
        listen(engine, "ranged");
        String fixedBody = "{\"fixed\":1}";
        String rangedBody = "{\"ranged\":1}";
        Instant due = Instant.now().plus(DELAY);
        String fixedFirst = sendInSpan(engine, "first", OutgoingMessage.fixedTime("fixed", fixedBody, due));
        String fixedLatest = sendInSpan(engine, "latest", OutgoingMessage.fixedTime("fixed", fixedBody, due));
        String rangedFirst = sendInSpan(engine, "first", OutgoingMessage.rangeMerge("ranged", rangedBody, DELAY));
        String rangedLatest = sendInSpan(engine, "latest", OutgoingMessage.rangeMerge("ranged", rangedBody, DELAY));

        await().atMost(Duration.ofSeconds(30)).until(() -> handlerTraceIds.containsKey(fixedBody)
                && handlerTraceIds.containsKey(rangedBody) && spans.getFinishedSpanItems().stream()
                        .filter(s -> s.getKind() == SpanKind.CONSUMER).count() == 2);
        assertThat(handlerTraceIds.get(fixedBody)).as("FIXED_TIME: the latest sender's").isEqualTo(fixedLatest)
                .isNotEqualTo(fixedFirst);
        assertThat(processSpanOf(fixedBody).getParentSpanId()).isEqualTo(span("send fixed", fixedLatest).getSpanId());
        // the trace context is a header, and every header follows the latest send, whatever the due time does
        assertThat(handlerTraceIds.get(rangedBody)).as("RANGE_MERGE: the latest sender's too").isEqualTo(rangedLatest)
                .isNotEqualTo(rangedFirst);
        assertThat(processSpanOf(rangedBody).getParentSpanId()).isEqualTo(span("send ranged", rangedLatest).getSpanId());
    }

    @Test
    void aLaterSendWithoutAContextTakesTheMessageOutOfTheEarlierSendersTrace() {
        Rmq propagating = engine(true);
        Rmq notPropagating = engine(false);
        propagating.defineTopic("jobs", TopicType.FIXED_TIME, 4);
        notPropagating.defineTopic("jobs", TopicType.FIXED_TIME, 4);
        listen(propagating, "jobs");
        Instant due = Instant.now().plus(DELAY);
        String first = sendInSpan(propagating, "request",
                OutgoingMessage.fixedTime("jobs", "{\"v\":1}", due).withId("j"));
        // another service, propagation off, sends the same id again with a header of its own: its envelope wins whole
        String other = sendInSpan(notPropagating, "other",
                OutgoingMessage.fixedTime("jobs", "{\"v\":2}", due).withId("j").withHeader("source", "b"));

        await().atMost(Duration.ofSeconds(30)).until(() -> handlerTraceIds.containsKey("{\"v\":2}")
                && spans.getFinishedSpanItems().stream().anyMatch(s -> s.getKind() == SpanKind.CONSUMER));
        assertThat(handlerTraceIds).as("the latest payload, handled once").containsOnlyKeys("{\"v\":2}");
        assertThat(handlerTraceIds.get("{\"v\":2}")).as("a trace of its own: the latest send carried no context")
                .isNotEqualTo(first).isNotEqualTo(other);
        assertThat(processSpanOf("{\"v\":2}").getParentSpanContext().isValid()).as("a root span").isFalse();
    }

    @Test
    void aSampledSendStoresItsContextAndTheHandlerContinuesTheSendersTrace() {
        Rmq engine = engine(true);
        engine.defineTopic("jobs", TopicType.FIXED_TIME, 4);
        String body = "{\"sampled\":1}";
        String requestTrace = sendInSpan(engine, "request",
                OutgoingMessage.fixedTime("jobs", body, Instant.now().plus(DELAY)));
        SpanData send = span("send jobs", requestTrace);

        Stored stored = stored(engine, "jobs", 4);
        assertThat(stored.waiting()).isOne();
        assertThat(stored.traceRecords()).as("a traceparent alone: one compact trace record").isOne();
        assertThat(stored.envelopes()).isZero();

        listen(engine, "jobs");
        await().atMost(Duration.ofSeconds(30)).until(() -> handlerTraceIds.containsKey(body)
                && spans.getFinishedSpanItems().stream().anyMatch(s -> s.getKind() == SpanKind.CONSUMER));
        assertThat(handlerTraceIds.get(body)).isEqualTo(requestTrace);
        assertThat(processSpanOf(body).getParentSpanId()).as("a child of the send span").isEqualTo(send.getSpanId());
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(stored(engine, "jobs", 4)).as("the record goes with the message")
                        .isEqualTo(new Stored(0, 0, 0, List.of())));
    }

    @Test
    void anUnsampledSendStoresNoContextAndItsHandlerStartsATraceOfItsOwn() {
        Rmq engine = engine(true);
        engine.defineTopic("jobs", TopicType.FIXED_TIME, 4);
        Instant due = Instant.now().plus(DELAY);
        String plain = "{\"unsampled\":1}";
        String requestTrace = sendUnsampled(engine, OutgoingMessage.fixedTime("jobs", plain, due));
        // a message with an id and a header of its own has an envelope: it holds the header, not the context
        String withId = "{\"unsampled\":2}";
        sendUnsampled(engine,
                OutgoingMessage.fixedTime("jobs", withId, due).withId("j-2").withHeader("source", "a"));
        // a batch, whose messages go out on the pipelined path
        List<String> batch = List.of("{\"unsampled\":10}", "{\"unsampled\":11}", "{\"unsampled\":12}");
        sampleRoots = false;
        try {
            Observation.createNotStarted("unsampled request", registry).observe(() -> engine.producer()
                    .sendBatch(batch.stream().map(b -> OutgoingMessage.fixedTime("jobs", b, due)).toList()));
        }
        finally {
            sampleRoots = true;
        }
        assertThat(spans.getFinishedSpanItems()).as("the sampler dropped the requests and their sends").isEmpty();

        Stored stored = stored(engine, "jobs", 4);
        assertThat(stored.waiting()).isEqualTo(5);
        assertThat(stored.traceRecords()).as("no trace record").isZero();
        assertThat(stored.envelopeHeaders()).as("the id message's envelope: its header alone")
                .containsExactly(Map.of("source", "a"));

        listen(engine, "jobs");
        await().atMost(Duration.ofSeconds(30)).until(() -> handlerTraceIds.keySet().containsAll(batch)
                && handlerTraceIds.containsKey(plain) && handlerTraceIds.containsKey(withId)
                && spans.getFinishedSpanItems().stream().filter(s -> s.getKind() == SpanKind.CONSUMER).count() == 5);
        for (String body : List.of(plain, withId, batch.get(0))) {
            SpanData process = processSpanOf(body);
            assertThat(process.getTraceId()).as("a trace of its own, sampled by the listener's sampler")
                    .isNotEqualTo(requestTrace);
            assertThat(process.getParentSpanContext().isValid()).as("a root span").isFalse();
        }
    }

    @Test
    void storingUnsampledContextsLinksAnUnsampledSendToItsHandler() {
        Rmq engine = engineStoringUnsampled();
        engine.defineTopic("jobs", TopicType.FIXED_TIME, 4);
        String body = "{\"unsampled\":3}";
        String requestTrace = sendUnsampled(engine,
                OutgoingMessage.fixedTime("jobs", body, Instant.now().plus(DELAY)));

        Stored stored = stored(engine, "jobs", 4);
        assertThat(stored.waiting()).isOne();
        assertThat(stored.traceRecords()).as("stored although unsampled").isOne();

        listen(engine, "jobs");
        await().atMost(Duration.ofSeconds(30)).until(() -> handlerTraceIds.containsKey(body));
        assertThat(handlerTraceIds.get(body)).as("the handler runs in the sender's (unsampled) trace")
                .isEqualTo(requestTrace);
        assertThat(spans.getFinishedSpanItems()).as("parent-based: the handler's span follows the unsampled sender")
                .noneMatch(s -> s.getTraceId().equals(requestTrace));
    }

    @Test
    void theB3SampledFlagDecidesToo() {
        tracer(B3Propagator.injectingSingleHeader());
        Rmq engine = engine(true);
        engine.defineTopic("jobs", TopicType.FIXED_TIME, 4);
        Instant due = Instant.now().plus(DELAY);
        String sampledBody = "{\"b3\":1}";
        String sampledTrace = sendInSpan(engine, "request", OutgoingMessage.fixedTime("jobs", sampledBody, due));
        String unsampledBody = "{\"b3\":0}";
        String unsampledTrace = sendUnsampled(engine,
                OutgoingMessage.fixedTime("jobs", unsampledBody, due));

        Stored stored = stored(engine, "jobs", 4);
        assertThat(stored.waiting()).isEqualTo(2);
        assertThat(stored.traceRecords()).isZero();
        assertThat(stored.envelopeHeaders()).as("the sampled send's b3 header alone").singleElement()
                .satisfies(headers -> assertThat(headers).containsOnlyKeys("b3"));

        listen(engine, "jobs");
        await().atMost(Duration.ofSeconds(30)).until(() -> handlerTraceIds.containsKey(sampledBody)
                && handlerTraceIds.containsKey(unsampledBody) && spans.getFinishedSpanItems().stream()
                        .filter(s -> s.getKind() == SpanKind.CONSUMER).count() == 2);
        assertThat(handlerTraceIds.get(sampledBody)).isEqualTo(sampledTrace);
        assertThat(processSpanOf(sampledBody).getParentSpanId())
                .isEqualTo(span("send jobs", sampledTrace).getSpanId());
        assertThat(handlerTraceIds.get(unsampledBody)).isNotEqualTo(unsampledTrace);
    }
}
