package io.rmq.spring.operations;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;

/** The users of {@link OperationsRecipeSecurityTest}: one with the OPS role, one without. */
@Configuration(proxyBeanMethods = false)
class OperationsRecipeUsers {

    static final String OPS = "ops";
    static final String VIEWER = "viewer";
    static final String PASSWORD = "recipe-secret";

    @Bean
    InMemoryUserDetailsManager users() {
        return new InMemoryUserDetailsManager(
                User.withUsername(OPS).password("{noop}" + PASSWORD).roles("OPS").build(),
                User.withUsername(VIEWER).password("{noop}" + PASSWORD).roles("VIEWER").build());
    }
}
