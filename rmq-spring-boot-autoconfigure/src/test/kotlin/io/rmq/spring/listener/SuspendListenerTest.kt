package io.rmq.spring.listener

import io.rmq.admin.MessageRef
import io.rmq.autoconfigure.RmqAutoConfiguration
import io.rmq.spring.RmqMessage
import io.rmq.spring.RmqTemplate
import io.rmq.spring.annotation.RmqListener
import io.rmq.test.ContextFailureLogs
import io.rmq.test.LogCapture
import io.rmq.test.RedisServersExtension
import io.rmq.test.RedisTopology
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.ExtendWith
import org.springframework.aot.generate.ClassNameGenerator
import org.springframework.aot.generate.DefaultGenerationContext
import org.springframework.aot.generate.InMemoryGeneratedFiles
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates
import org.springframework.beans.factory.support.RootBeanDefinition
import org.springframework.boot.autoconfigure.AutoConfigurations
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration
import org.springframework.boot.test.context.runner.ApplicationContextRunner
import org.springframework.context.aot.ApplicationContextAotGenerator
import org.springframework.context.support.GenericApplicationContext
import org.springframework.javapoet.ClassName
import java.time.Duration
import java.time.Instant
import java.util.UUID
import java.util.concurrent.CopyOnWriteArrayList
import kotlin.coroutines.Continuation

/**
 * A Kotlin `suspend` @RmqListener: the coroutine runs (here across `delay()`), the delivery stays leased until it
 * ends and is then acked; what it throws fails the attempt, retried and finally dead like a blocking listener's.
 */
@ExtendWith(RedisServersExtension::class, ContextFailureLogs::class)
class SuspendListenerTest {

    private val app = ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration::class.java,
            JacksonAutoConfiguration::class.java, RmqAutoConfiguration::class.java))
        .withPropertyValues(*RedisTopology.STANDALONE.springProperties().entries
            .map { "${it.key}=${it.value}" }.toTypedArray())
        .withPropertyValues("rmq.key-prefix=suspend-" + UUID.randomUUID())

    class Listener {
        val started = CopyOnWriteArrayList<String>()
        val handled = CopyOnWriteArrayList<String>()
        val gate = CompletableDeferred<Unit>()

        @RmqListener(topic = "kt-suspend", type = "FIXED_TIME", slotAmount = "4", concurrency = "1", lease = "1s")
        suspend fun handle(body: String) {
            started.add(body)
            delay(50)
            gate.await()
            handled.add(body)
        }
    }

    class Failing {
        val attempts = CopyOnWriteArrayList<Int>()

        @RmqListener(topic = "kt-failing", type = "FIXED_TIME", slotAmount = "4", concurrency = "1",
            maxRetries = "2", backoffInitial = "100ms", backoffJitter = "0")
        suspend fun handle(message: RmqMessage<String>) {
            attempts.add(message.attempt())
            if (message.attempt() == 1) {
                // before the coroutine first suspends: thrown from the call itself
                throw IllegalStateException("cannot handle ${message.payload()}")
            }
            delay(50)
            // after it resumed on another thread: thrown through the coroutine's completion
            throw IllegalStateException("cannot handle ${message.payload()}")
        }
    }

    class Endless {
        val started = CompletableDeferred<Unit>()
        val cancelled = CompletableDeferred<Unit>()

        @RmqListener(topic = "kt-endless", type = "FIXED_TIME", slotAmount = "4", concurrency = "1")
        suspend fun handle(body: String) {
            started.complete(Unit)
            try {
                awaitCancellation()
            } finally {
                cancelled.complete(Unit)
            }
        }
    }

    @Test
    fun suspendListenerIsInvokedAndItsMessageStaysLeasedUntilTheCoroutineEnds() {
        app.withBean("listener", Listener::class.java).run { context ->
            assertThat(context).hasNotFailed()
            val listener = context.getBean(Listener::class.java)
            val rmq = context.getBean(RmqTemplate::class.java)
            rmq.sendFixedTime("kt-suspend", "a", Instant.now())
            await().atMost(Duration.ofSeconds(30)).until { listener.started.contains("a") }
            // suspended for several 1 s leases: still in flight (the lease is extended), not redelivered
            Thread.sleep(3000)
            assertThat(rmq.admin().find(MessageRef.body("kt-suspend", "a")).inFlight()).isTrue()
            assertThat(listener.started).containsExactly("a")
            assertThat(listener.handled).isEmpty()

            listener.gate.complete(Unit)
            await().atMost(Duration.ofSeconds(30))
                    .until { !rmq.admin().find(MessageRef.body("kt-suspend", "a")).exists() }
            assertThat(listener.handled).containsExactly("a")
            assertThat(listener.started).containsExactly("a")
        }
    }

    @Test
    fun aSuspendListenerThatThrowsIsRetriedThenDeadWithTheError() {
        LogCapture.rmq().expecting("cannot handle k-1").use { log ->
            app.withBean("failing", Failing::class.java).run { context ->
                assertThat(context).hasNotFailed()
                val rmq = context.getBean(RmqTemplate::class.java)
                rmq.sendFixedTime("kt-failing", "k-1", Instant.now())
                await().atMost(Duration.ofSeconds(45)).until { rmq.admin().deadCount("kt-failing") == 1L }
                assertThat(context.getBean(Failing::class.java).attempts).containsExactly(1, 2, 3)
                val dead = rmq.admin().deadMessages("kt-failing", 0, 10)[0]
                assertThat(dead.bodyAsString()).isEqualTo("k-1")
                assertThat(dead.attempts()).isEqualTo(3)
                assertThat(dead.lastError()).isEqualTo("java.lang.IllegalStateException: cannot handle k-1")
            }
            assertThat(log.warnings()).hasSize(3)
        }
    }

    @Test
    fun theContinuationIsNotAPayloadParameter() {
        val handle = Listener::class.java.getDeclaredMethod("handle", String::class.java, Continuation::class.java)
        assertThat(RmqListenerAnnotationBeanPostProcessor.signature(handle).payloadType()).isEqualTo(String::class.java)
        val failing = Failing::class.java.getDeclaredMethod("handle", RmqMessage::class.java, Continuation::class.java)
        val signature = RmqListenerAnnotationBeanPostProcessor.signature(failing)
        assertThat(signature.payloadType()).isEqualTo(String::class.java)
        assertThat(signature.takesRmqMessage()).isTrue()
    }

    @Test
    fun aotProcessingRegistersASuspendListenerButNotItsContinuation() {
        val generation = DefaultGenerationContext(ClassNameGenerator(ClassName.get(javaClass)),
            InMemoryGeneratedFiles())
        GenericApplicationContext().use { context ->
            context.registerBeanDefinition("failing", RootBeanDefinition(Failing::class.java))
            ApplicationContextAotGenerator().processAheadOfTime(context, generation)
        }
        val hints = generation.runtimeHints
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Failing::class.java, "handle")).accepts(hints)
        assertThat(RuntimeHintsPredicates.reflection().onType(Continuation::class.java)).rejects(hints)
    }

    @Test
    fun aCoroutineStillRunningWhenTheShutdownTimeoutHasPassedIsCancelled() {
        val endless = Endless()
        // a blocking listener interrupted at that point is reported the same way (its message comes back after its
        // lease)
        LogCapture.rmq().expecting("still running after", "could not settle").use { log ->
            app.withBean("endless", Endless::class.java, { endless }).withPropertyValues("rmq.shutdown-timeout=500ms")
                .run { context ->
                    assertThat(context).hasNotFailed()
                    context.getBean(RmqTemplate::class.java).sendFixedTime("kt-endless", "forever", Instant.now())
                    await().atMost(Duration.ofSeconds(30)).until { endless.started.isCompleted }
                    assertThat(endless.cancelled.isCompleted).isFalse()
                }
            // the context closed: its container stopped, waited 500 ms, then interrupted the handler thread
            await().atMost(Duration.ofSeconds(30)).until { endless.cancelled.isCompleted }
            assertThat(log.warnings()).anySatisfy { assertThat(it).contains("1 handlers still running after") }
        }
    }
}
