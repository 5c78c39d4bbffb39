package io.rmq.autoconfigure;

import java.util.UUID;

import io.rmq.admin.MessageRef;
import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.RmqSendFailureHandler;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.RmqTransactionMode;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code rmq.template.transaction-mode} and the {@link RmqSendFailureHandler} bean. */
@ExtendWith(RedisServersExtension.class)
class RmqTransactionAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
                    RmqAutoConfiguration.class))
            .withPropertyValues(RedisTopology.STANDALONE.propertyValues())
            .withPropertyValues("rmq.key-prefix=ac-tx-" + UUID.randomUUID(), "rmq.topics.audit.type=PRIORITY");

    @Test
    void byDefaultSendsFollowTheTransactionAndFailuresAfterTheCommitAreLogged() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(RmqTemplate.class).getTransactionMode())
                    .isEqualTo(RmqTransactionMode.AFTER_COMMIT);
            assertThat(context).getBean(RmqSendFailureHandler.class).isSameAs(RmqSendFailureHandler.logging());
        });
    }

    @Test
    void transactionModeImmediateWritesAtOnceInsideATransactionAndARollbackKeepsIt() {
        runner.withPropertyValues("rmq.template.transaction-mode=immediate")
                .withUserConfiguration(Database.class)
                .run(context -> {
                    RmqTemplate template = context.getBean(RmqTemplate.class);
                    assertThat(template.getTransactionMode()).isEqualTo(RmqTransactionMode.IMMEDIATE);
                    assertThat(template.immediate()).isSameAs(template);
                    TransactionTemplate transaction = new TransactionTemplate(
                            context.getBean(DataSourceTransactionManager.class));

                    transaction.executeWithoutResult(status -> {
                        assertThat(template.send(OutgoingMessage.priority("audit", "written at once", 1)).held())
                                .isFalse();
                        assertThat(template.admin().contains(MessageRef.body("audit", "written at once"))).isTrue();
                        status.setRollbackOnly();
                    });

                    assertThat(template.admin().contains(MessageRef.body("audit", "written at once"))).isTrue();
                });
    }

    @Test
    void anApplicationsFailureHandlerReplacesTheDefault() {
        RmqSendFailureHandler own = (message, error) -> { };
        runner.withBean("ownFailureHandler", RmqSendFailureHandler.class, () -> own).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).getBeans(RmqSendFailureHandler.class).containsOnlyKeys("ownFailureHandler");
        });
    }

    /** An embedded H2 and its transaction manager. */
    @Configuration(proxyBeanMethods = false)
    static class Database {

        @Bean(destroyMethod = "shutdown")
        EmbeddedDatabase dataSource() {
            return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
        }

        @Bean
        DataSourceTransactionManager transactionManager(EmbeddedDatabase dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
    }
}
