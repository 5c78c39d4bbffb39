package io.rmq.autoconfigure;

import io.rmq.coordination.SlotCoordinator;
import io.rmq.coordination.zookeeper.ZooKeeperSlotCoordinator;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Coordinates ORDERLY listeners through ZooKeeper (Apache Curator) when {@code rmq.coordination.zookeeper.connect-string}
 * is set and Curator is on the class path; otherwise they coordinate in Redis. Uses the application's
 * {@link CuratorFramework} when it has one.
 */
@AutoConfiguration(before = RmqAutoConfiguration.class)
@ConditionalOnClass({CuratorFramework.class, ZooKeeperSlotCoordinator.class})
@ConditionalOnProperty("rmq.coordination.zookeeper.connect-string")
@EnableConfigurationProperties(RmqProperties.class)
public class RmqZooKeeperAutoConfiguration {

    @Bean(initMethod = "start", destroyMethod = "close")
    @ConditionalOnMissingBean
    public CuratorFramework rmqCuratorFramework(RmqProperties properties) {
        RmqProperties.ZooKeeper zookeeper = properties.coordination().zookeeper();
        return CuratorFrameworkFactory.newClient(zookeeper.connectString(),
                (int) zookeeper.sessionTimeout().toMillis(), (int) zookeeper.connectionTimeout().toMillis(),
                new ExponentialBackoffRetry(200, 5, 2000));
    }

    @Bean
    @ConditionalOnMissingBean(SlotCoordinator.class)
    public SlotCoordinator rmqZooKeeperSlotCoordinator(CuratorFramework curator, RmqProperties properties) {
        return new ZooKeeperSlotCoordinator(curator, properties.coordination().zookeeper().root());
    }
}
