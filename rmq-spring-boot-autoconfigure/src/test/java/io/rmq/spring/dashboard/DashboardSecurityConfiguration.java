package io.rmq.spring.dashboard;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * An application that lets everyone in but keeps Spring Security's CSRF protection (the default): what the dashboard
 * must work with. Only on the class path of the *SecurityTest run.
 */
@TestConfiguration(proxyBeanMethods = false)
class DashboardSecurityConfiguration {

    @Bean
    SecurityFilterChain everyoneWithCsrf(HttpSecurity http) throws Exception {
        return http.authorizeHttpRequests(requests -> requests.anyRequest().permitAll()).build();
    }

    /** No users: without it Boot makes one with a generated password and says so in the build log. */
    @Bean
    InMemoryUserDetailsManager noUsers() {
        return new InMemoryUserDetailsManager();
    }
}
