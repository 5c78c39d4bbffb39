package io.rmq.spring.transactions;

import javax.sql.DataSource;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

/**
 * A real database for the transaction tests: an embedded H2 of its own per context (orders and stock tables), its
 * {@link DataSourceTransactionManager}, and {@link Transactions}, which runs code in each propagation.
 */
@Configuration(proxyBeanMethods = false)
@EnableTransactionManagement
class TransactionTestDatabase {

    @Bean(destroyMethod = "shutdown")
    org.springframework.jdbc.datasource.embedded.EmbeddedDatabase dataSource() {
        return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
    }

    @Bean
    DataSourceTransactionManager transactionManager(DataSource dataSource) {
        return new DataSourceTransactionManager(dataSource);
    }

    @Bean
    JdbcTemplate jdbcTemplate(DataSource dataSource) {
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        jdbc.execute("create table orders (id varchar(64) primary key, item varchar(64), status varchar(16))");
        jdbc.execute("create table stock (item varchar(64) primary key, available int)");
        return jdbc;
    }

    @Bean
    Transactions transactions(JdbcTemplate jdbc) {
        return new Transactions(jdbc);
    }

    /** Runs code in a transaction of each propagation; code that throws rolls its transaction back. */
    static class Transactions {

        private final JdbcTemplate jdbc;

        Transactions(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        @Transactional
        public void required(Runnable body) {
            body.run();
        }

        @Transactional(propagation = Propagation.REQUIRES_NEW)
        public void requiresNew(Runnable body) {
            body.run();
        }

        @Transactional(propagation = Propagation.NESTED)
        public void nested(Runnable body) {
            body.run();
        }

        @Transactional(propagation = Propagation.NOT_SUPPORTED)
        public void notSupported(Runnable body) {
            body.run();
        }

        @Transactional(propagation = Propagation.SUPPORTS)
        public void supports(Runnable body) {
            body.run();
        }

        /** A row in the transaction (if any) the caller runs in. */
        public void insertOrder(String id) {
            jdbc.update("insert into orders (id, item, status) values (?, 'test', 'NEW')", id);
        }

        public boolean orderExists(String id) {
            return jdbc.queryForObject("select count(*) from orders where id = ?", Integer.class, id) == 1;
        }

        public void stock(String item, int available) {
            jdbc.update("merge into stock (item, available) key (item) values (?, ?)", item, available);
        }
    }
}
