package io.rmq.core;

import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;

import tools.jackson.core.JsonGenerator;
import tools.jackson.core.util.ByteArrayBuilder;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.ObjectWriter;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.json.JsonMapper;
import org.jspecify.annotations.Nullable;

/**
 * Turns bodies into the bytes that are a message's identity, and back. {@code byte[]} and {@code String} are stored
 * as they are; anything else as canonical JSON (properties and map keys sorted, no indentation) so that equal
 * objects serialize byte-identically and merge. Bodies are read back as the {@link PayloadMapping} says: with the
 * application's mapper as it is, or, strictly, failing on a body that lacks a required property.
 */
public final class BodyCodec {

    private final JsonMapper mapper;
    /** What {@link #decode} reads with: {@link #mapper}, plus {@link StrictPayloadModule} when strict. */
    private final JsonMapper readMapper;
    private final PayloadMapping payloadMapping;
    /** Readers per payload type: resolving the type and its deserializer once, not per message. */
    private final java.util.Map<Type, ObjectReader> readers = new java.util.concurrent.ConcurrentHashMap<>();
    /** One-at-a-time serialization state per sending thread (see {@link #encode}). */
    private final ThreadLocal<Encoder> threadEncoders = ThreadLocal.withInitial(Encoder::new);
    /** Writers per body class, likewise: the serializer is found once, not on every send. */
    private final java.util.Map<Class<?>, ObjectWriter> writers = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * A codec that reads bodies with the mapper as it is ({@link PayloadMapping#LENIENT}).
     *
     * @param mapper the application's mapper (its modules and settings are kept); canonical ordering is forced on a
     *               copy
     */
    public BodyCodec(JsonMapper mapper) {
        this(mapper, PayloadMapping.LENIENT);
    }

    /**
     * @param mapper         the application's mapper (its modules and settings are kept, the mapper itself is not
     *                       changed); canonical ordering is forced on a copy
     * @param payloadMapping how strictly bodies are read as payload types
     */
    public BodyCodec(JsonMapper mapper, PayloadMapping payloadMapping) {
        if (payloadMapping == null) {
            throw new RmqInvalidArgumentException("payloadMapping", null, "must not be null");
        }
        this.payloadMapping = payloadMapping;
        this.mapper = mapper.rebuild()
                .enable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
                .disable(MapperFeature.SORT_CREATOR_PROPERTIES_FIRST)
                .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
                .disable(SerializationFeature.INDENT_OUTPUT)
                .addModule(new DirectCreatorModule())
                .build();
        this.readMapper = payloadMapping == PayloadMapping.STRICT
                ? this.mapper.rebuild().addModule(new StrictPayloadModule()).build()
                : this.mapper;
    }

    public BodyCodec() {
        this(JsonMapper.builder().findAndAddModules().build());
    }

    /**
     * Serializes one body. Each thread keeps an {@link Encoder} for this: one-at-a-time sends are the common case and
     * pay what a batch saves (see {@link #encoder()}).
     */
    public byte[] encode(Object body) {
        byte[] raw = raw(body);
        if (raw != null) {
            return raw;
        }
        Encoder encoder = threadEncoders.get();
        if (encoder.busy) { // a body whose serialization sends a message itself
            try {
                return writer(body).writeValueAsBytes(body);
            }
            catch (RuntimeException ex) {
                throw notSerializable(body, ex);
            }
        }
        return encoder.encode(body);
    }

    /**
     * An encoder for many bodies in a row (a batch send), on one thread. Same bytes as {@link #encode}, but one JSON
     * generator and output buffer serve every body: creating them per body dominates serializing small bodies.
     */
    public Encoder encoder() {
        return new Encoder();
    }

    /** See {@link #encoder()}. Not thread-safe; close it when done. */
    public final class Encoder implements AutoCloseable {

        /** Bodies above this size release the buffer afterwards, so a thread does not keep a large one. */
        private static final int KEEP_BUFFER_BELOW = 64 * 1024;

        private ByteArrayBuilder buffer = new ByteArrayBuilder(256);
        private @Nullable JsonGenerator generator;
        private boolean busy;

        private Encoder() {
        }

        public byte[] encode(Object body) {
            byte[] raw = raw(body);
            if (raw != null) {
                return raw;
            }
            busy = true;
            try {
                ObjectWriter writer = writer(body);
                if (generator == null) {
                    generator = writer.createGenerator(buffer);
                }
                writer.writeValue(generator, body);
                generator.flush();
                byte[] bytes = buffer.toByteArray();
                buffer.reset();
                if (bytes.length >= KEEP_BUFFER_BELOW) {
                    close();
                }
                return bytes;
            }
            catch (RuntimeException ex) {
                close(); // a half-written value must not leak into the next body
                throw notSerializable(body, ex);
            }
            finally {
                busy = false;
            }
        }

        @Override
        public void close() {
            if (generator != null) {
                JsonGenerator open = generator;
                generator = null;
                try {
                    open.close();
                }
                catch (RuntimeException ignored) {
                    // a generator left broken by a failed body: it is dropped either way
                }
            }
            buffer = new ByteArrayBuilder(256);
        }
    }

    /** byte[] and String bodies as they are; null when the body needs JSON. */
    private static byte @Nullable [] raw(@Nullable Object body) {
        if (body == null) {
            throw new RmqInvalidArgumentException("body", null, "must not be null");
        }
        if (body instanceof byte[] bytes) {
            return bytes;
        }
        if (body instanceof String text) {
            return text.getBytes(StandardCharsets.UTF_8);
        }
        return null;
    }

    private ObjectWriter writer(Object body) {
        ObjectWriter writer = writers.get(body.getClass());
        if (writer == null) {
            // no separator between root values: an Encoder writes many bodies through one generator
            writer = writers.computeIfAbsent(body.getClass(),
                    type -> mapper.writerFor(type).withRootValueSeparator((String) null));
        }
        return writer;
    }

    private static RmqInvalidArgumentException notSerializable(Object body, RuntimeException ex) {
        return new RmqInvalidArgumentException("body", body.getClass().getName(),
                "must be serializable to JSON: " + ex.getMessage());
    }

    /**
     * Converts stored bytes to {@code type}; {@code byte[]} and {@code String} get the bytes as they are.
     *
     * @throws RmqPayloadMismatchException when the bytes are JSON but do not match {@code type} (see
     *                                     {@link PayloadMapping})
     * @throws RuntimeException            when the bytes cannot be read as {@code type} otherwise (not JSON, a
     *                                     constructor that threw); the caller dead-letters the message
     */
    @SuppressWarnings("unchecked")
    public <T> T decode(byte[] body, Type type) {
        if (type == byte[].class) {
            return (T) body;
        }
        if (type == String.class || type == CharSequence.class) {
            return (T) new String(body, StandardCharsets.UTF_8);
        }
        try {
            return reader(type).readValue(body);
        }
        catch (MismatchedInputException ex) {
            throw RmqPayloadMismatchException.of(type, ex);
        }
    }

    /**
     * Resolves the deserializer for {@code type} now rather than at the first message: building it takes tens of
     * milliseconds in a fresh JVM, which would make the first delayed messages late.
     */
    public void prepare(Type type) {
        if (type != byte[].class && type != String.class && type != CharSequence.class) {
            reader(type);
        }
    }

    private ObjectReader reader(Type type) {
        ObjectReader reader = readers.get(type);
        if (reader == null) {
            JavaType javaType = readMapper.constructType(type);
            reader = readers.computeIfAbsent(type, t -> readMapper.readerFor(javaType));
        }
        return reader;
    }

    /** The mapper bodies are written with (canonical ordering forced). */
    public JsonMapper mapper() {
        return mapper;
    }

    /** The mapper {@link #decode} reads with: {@link #mapper()}, made strict when {@link #payloadMapping()} says so. */
    public JsonMapper readMapper() {
        return readMapper;
    }

    public PayloadMapping payloadMapping() {
        return payloadMapping;
    }
}
